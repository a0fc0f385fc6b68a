import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Pairwise subject identifiers (OpenID Connect Core §8.1): each sector sees its own `sub` for a user.
@Suite("Pairwise subject identifiers")
struct PairwiseSubjectTests {
    /// `pw-a` (confidential, sector rp.example, listening for back-channel logout), `pw-b` (another host
    /// of the same sector, named), `pw-c` (sector elsewhere.example) and `plain` (public subjects).
    static let redirects = [
        "pw-a": "https://rp.example/cb", "pw-b": "https://login.rp.example/cb", "pw-c": "https://elsewhere.example/cb",
        "plain": "https://plain.example/cb",
    ]

    static func isPairwise(_ sub: String?) -> Bool {
        guard let sub else { return false }
        return UUID(uuidString: sub) == nil && sub.count == 43
            && sub.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" }
    }

    @Test(
        "PAIR-1: subject_type=pairwise gives a client a sub of its sector alone (the same for two clients of one sector, another for another sector, the user id for a public client) in ID tokens, access tokens, refreshed ID tokens, userinfo, introspection of access and refresh tokens and back-channel logout tokens; its access token still works at /v1/me; an id_token_hint carrying the client's pairwise sub finds the browser session (prompt=none) while another sector's does not; RP-initiated logout recognises the pairwise hint without asking; the sector is fixed when pairwise is turned on, and a pairwise client with redirect URIs on two hosts and no sector is refused"
    )
    func pairwise() async throws {
        let receiver = try await HookServer.start { _ in HookServer.Answer(status: 200) }
        let server = try await TestServer.startOpen(.sqlite)
        do {
            let a = try await server.createClient(
                id: "pw-a", kind: .confidential, redirectURIs: [try #require(Self.redirects["pw-a"])],
                settings: [
                    "email_verification=off", "subject_type=pairwise", "backchannel_logout_uri=http://127.0.0.1:\(receiver.port)/hook",
                ])
            _ = try await server.createClient(
                id: "pw-b", redirectURIs: [try #require(Self.redirects["pw-b"])],
                settings: ["email_verification=off", "subject_type=pairwise", "sector_identifier=rp.example"])
            _ = try await server.createClient(
                id: "pw-c", redirectURIs: [try #require(Self.redirects["pw-c"])],
                settings: ["email_verification=off", "subject_type=pairwise"])
            _ = try await server.createClient(
                id: "plain", redirectURIs: [try #require(Self.redirects["plain"])], settings: ["email_verification=off"])
            let secret = try #require(a.secret)
            let admin = ClientAdmin(persistence: server.persistence, clock: server.clock)
            await #expect(throws: ClientAdminError.self) {
                _ = try await admin.create(
                    id: "pw-two-hosts", name: "Two hosts", kind: .public,
                    redirectURIs: ["https://one.example/cb", "https://two.example/cb"],
                    scopes: [], settings: ["subject_type=pairwise"])
            }

            try await server.withRouter { client in
                let user = try await signUp(client, clientID: "plain")
                let userID = try #require(try await client.json(.get, "/v1/me", bearer: user.accessToken).string("id"))
                let jar = HostedJar(client)
                var tokens: [String: TestResponse] = [:]
                for id in ["pw-a", "pw-b", "pw-c", "plain"] {
                    let redirect = try #require(Self.redirects[id])
                    let pkce = pkcePair()
                    let uri = Hosted.request(id, redirect: redirect, challenge: pkce.challenge)
                    let answer =
                        id == "pw-a"
                        ? try await Hosted.signIn(jar, uri, email: user.email, password: user.password) : try await jar.open(uri)
                    let code = try #require(HostedJar.query(answer)["code"], "\(id): \(answer.text)")
                    var fields = ["grant_type": "authorization_code", "code": code, "client_id": id, "redirect_uri": redirect]
                    fields["code_verifier"] = pkce.verifier
                    if id == "pw-a" { fields["client_secret"] = secret }
                    tokens[id] = try await client.form("/oauth/token", fields)
                }
                func idClaims(_ id: String) throws -> [String: Any] {
                    try decodeClaims(try #require(tokens[id]?.string("id_token"), "\(id): \(tokens[id]?.text ?? "")"))
                }
                let subA = try #require(try idClaims("pw-a")["sub"] as? String)
                #expect(Self.isPairwise(subA), "\(subA)")
                #expect(try idClaims("pw-b")["sub"] as? String == subA)
                let subC = try #require(try idClaims("pw-c")["sub"] as? String)
                #expect(Self.isPairwise(subC) && subC != subA)
                #expect(try idClaims("plain")["sub"] as? String == userID)

                // Every other place pw-a is shown the user.
                let access = try #require(tokens["pw-a"]?.string("access_token"))
                #expect(try decodeClaims(access)["sub"] as? String == subA)
                let me = try await client.json(.get, "/v1/me", bearer: access)
                #expect(me.status == .ok && me.string("id") == userID, "\(me.text)")
                #expect(try await client.json(.get, "/userinfo", bearer: access).string("sub") == subA)
                let refresh = try #require(tokens["pw-a"]?.string("refresh_token"))
                for token in [access, refresh] {
                    let answer = try await client.form("/oauth/introspect", ["token": token], basic: ("pw-a", secret))
                    #expect(answer.object["active"] as? Bool == true && answer.string("sub") == subA, "\(answer.text)")
                }
                let refreshed = try await client.form(
                    "/oauth/token", ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "pw-a", "client_secret": secret])
                #expect(try decodeClaims(try #require(refreshed.string("id_token"), "\(refreshed.text)"))["sub"] as? String == subA)

                // id_token_hint: pw-c's own hint finds the session; pw-a's (another sector's sub) does not.
                for (hintOf, answered) in [("pw-c", "code"), ("pw-a", "error")] {
                    let pkce = pkcePair()
                    let hint = try #require(tokens[hintOf]?.string("id_token"))
                    let uri = Hosted.request(
                        "pw-c", redirect: try #require(Self.redirects["pw-c"]), challenge: pkce.challenge,
                        extra: [("prompt", "none"), ("id_token_hint", hint)])
                    let answer = HostedJar.query(try await jar.open(uri))
                    #expect(answer[answered] != nil, "hint of \(hintOf): \(answer)")
                    if hintOf == "pw-a" { #expect(answer["error"] == "login_required") }
                }

                // RP-initiated logout with pw-a's pairwise hint ends the session without asking, and
                // pw-a's logout token names the user by the same pairwise sub.
                let logout = try await jar.send(
                    .get, "/oauth/logout?" + FormEncoding.encode([("id_token_hint", try #require(tokens["pw-a"]?.string("id_token")))]))
                #expect(logout.status == .ok && !logout.text.contains("name=\"confirm\""), "\(logout.text)")
                _ = try await server.deliverMail()
                let delivered = try #require(await receiver.requests(to: "/hook").first)
                let logoutToken = try BackChannelLogoutTests.logoutToken(delivered)
                #expect(try decodeClaims(logoutToken)["sub"] as? String == subA)

                // The sector stays when the redirect URIs move: the users keep their subjects.
                let moved = try await admin.update(id: "pw-c", settings: [], redirectURIs: ["https://moved.example/cb"])
                #expect(moved.settings.sectorIdentifier == "elsewhere.example")
            }
        } catch {
            await receiver.stop()
            await server.stop()
            throw error
        }
        await receiver.stop()
        await server.stop()
    }
}
