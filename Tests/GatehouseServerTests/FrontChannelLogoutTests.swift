import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// OpenID Connect Front-Channel Logout 1.0 as the page sends it; a real browser loading the frames is
/// OIDC-1's rp-logout phase.
@Suite("Front-channel logout")
struct FrontChannelLogoutTests {
    static let redirects = ["fc-a": "https://rp-a.example/cb", "fc-b": "https://rp-b.example/cb", "fc-c": "https://rp-c.example/cb"]

    /// The `src` of every frame on a page, unescaped.
    static func frames(_ html: String) -> [URLComponents] {
        html.components(separatedBy: "<iframe src=\"").dropFirst().compactMap { rest in
            rest.split(separator: "\"", maxSplits: 1).first.map { String($0).replacingOccurrences(of: "&amp;", with: "&") }
        }.compactMap(URLComponents.init(string:))
    }

    @Test(
        "FCL-1: RP-initiated logout of a browser signed in to three clients answers a page that frames each frontchannel_logout_uri (its own query kept) with iss and the sid of that client's ID tokens, allows exactly those origins in frame-src, and moves on to the post_logout_redirect_uri (with state) by a hashed script only after the frames loaded, with a link for browsers without script; a client without the URI gets no frame; without a redirect the logged-out page frames them and runs no script; a browser without a session gets a plain redirect"
    )
    func frontChannel() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        _ = try await server.createClient(
            id: "fc-a", redirectURIs: [try #require(Self.redirects["fc-a"])],
            settings: [
                "email_verification=off", "frontchannel_logout_uri=https://rp-a.example/fc?tenant=7",
                "post_logout_redirect_uris=https://rp-a.example/bye",
            ])
        _ = try await server.createClient(
            id: "fc-b", redirectURIs: [try #require(Self.redirects["fc-b"])],
            settings: ["email_verification=off", "frontchannel_logout_uri=https://rp-b.example/logout"])
        _ = try await server.createClient(
            id: "fc-c", redirectURIs: [try #require(Self.redirects["fc-c"])], settings: ["email_verification=off"])
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "fc-c")
            for withRedirect in [true, false] {
                let jar = HostedJar(client)
                var sids: [String: String] = [:]
                var hint = ""
                for id in ["fc-a", "fc-b", "fc-c"] {
                    let redirect = try #require(Self.redirects[id])
                    let pkce = pkcePair()
                    let uri = Hosted.request(id, redirect: redirect, challenge: pkce.challenge)
                    let answer =
                        id == "fc-a"
                        ? try await Hosted.signIn(jar, uri, email: user.email, password: user.password) : try await jar.open(uri)
                    let code = try #require(HostedJar.query(answer)["code"], "\(id): \(answer.text)")
                    let tokens = try await Hosted.exchange(client, code: code, verifier: pkce.verifier, id: id, redirect: redirect)
                    let idToken = try #require(tokens.string("id_token"), "\(tokens.text)")
                    sids[id] = try decodeClaims(idToken)["sid"] as? String
                    if id == "fc-a" { hint = idToken }
                }
                var fields = [("id_token_hint", hint)]
                if withRedirect { fields += [("post_logout_redirect_uri", "https://rp-a.example/bye"), ("state", "s 1")] }
                let page = try await jar.send(.get, "/oauth/logout?" + FormEncoding.encode(fields))
                #expect(page.status == .ok, "\(page.status) \(page.text)")
                let frames = Self.frames(page.text)
                #expect(frames.count == 2, "\(page.text)")
                let byHost = Dictionary(frames.map { ($0.host ?? "", $0) }, uniquingKeysWith: { first, _ in first })
                for (id, host, path) in [("fc-a", "rp-a.example", "/fc"), ("fc-b", "rp-b.example", "/logout")] {
                    let frame = try #require(byHost[host], "\(frames)")
                    let query = Dictionary(
                        (frame.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
                    #expect(frame.scheme == "https" && frame.path == path)
                    #expect(query["iss"] == Hosted.issuer && query["sid"] == sids[id], "\(query)")
                    if id == "fc-a" { #expect(query["tenant"] == "7") }
                }
                let csp = try #require(page.headers[.contentSecurityPolicy])
                #expect(csp.contains("frame-src https://rp-a.example https://rp-b.example"), "\(csp)")
                #expect(!csp.contains("rp-c.example"))
                if withRedirect {
                    #expect(csp.contains("script-src 'sha256-"), "\(csp)")
                    #expect(page.text.contains("id=\"continue\" href=\"https://rp-a.example/bye?state=s%201\""), "\(page.text)")
                    #expect(page.text.contains("<script>addEventListener(\"load\""))
                } else {
                    #expect(!csp.contains("script-src") && !page.text.contains("<script"))
                }
            }
            // No browser session: nothing ends, nobody is framed, the redirect is immediate.
            let bare = try await HostedJar(client).send(
                .get,
                "/oauth/logout?" + FormEncoding.encode([("client_id", "fc-a"), ("post_logout_redirect_uri", "https://rp-a.example/bye")]))
            #expect(bare.status == .seeOther && bare.headers[.location] == "https://rp-a.example/bye", "\(bare.status)")
        }
    }
}
