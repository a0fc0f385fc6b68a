import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A browser for the in-process router: keeps the cookies it is given, sends them back, follows
/// redirects that stay on the server, and reads the CSRF token off a page's form.
final class HostedJar: @unchecked Sendable {
    // Used from one test task at a time (the tests await each request), so no lock is needed.
    /// The node the next request goes to (two nodes behind one name are one browser's server).
    var client: any TestClientProtocol
    var cookies: [String: String] = [:]
    var acceptLanguage: String?

    init(_ client: any TestClientProtocol) { self.client = client }

    func send(
        _ method: HTTPRequest.Method, _ uri: String, form: [(String, String)]? = nil, headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if !cookies.isEmpty { headers[.cookie] = cookieHeader }
        if let acceptLanguage { headers[.acceptLanguage] = acceptLanguage }
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = ByteBuffer(string: FormEncoding.encode(form))
        }
        let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
        for value in response.headers[values: .setCookie] {
            let pair = value.split(separator: ";").first.map(String.init) ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { continue }
            if value.contains("Max-Age=0") || parts[1].isEmpty { cookies[parts[0]] = nil } else { cookies[parts[0]] = parts[1] }
        }
        return response
    }

    /// GET, then follow same-server redirects; stops at a page or at a redirect elsewhere.
    func open(_ uri: String) async throws -> TestResponse {
        var response = try await send(.get, uri)
        var hops = 0
        while response.status == .seeOther || response.status == .found, let location = response.headers[.location],
            location.hasPrefix("/"),
            hops < 10
        {
            response = try await send(.get, location)
            hops += 1
        }
        return response
    }

    /// Posts a form of the page, then follows same-server redirects.
    func submit(_ action: String, _ fields: [(String, String)], csrf: String?) async throws -> TestResponse {
        var response = try await send(.post, action, form: (csrf.map { [("csrf", $0)] } ?? []) + fields)
        var hops = 0
        while response.status == .seeOther, let location = response.headers[.location], location.hasPrefix("/"), hops < 10 {
            response = try await send(.get, location)
            hops += 1
        }
        return response
    }

    /// The `Cookie` header this browser sends.
    var cookieHeader: String { cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }

    static func csrf(_ page: TestResponse) -> String? { attribute(page.text, after: "name=\"csrf\" value=\"") }

    /// A form's `action` by its id.
    static func action(_ page: TestResponse, form id: String) -> String? {
        guard let start = page.text.range(of: "<form id=\"\(id)\"") else { return nil }
        return attribute(String(page.text[start.upperBound...]), after: "action=\"")
    }

    static func attribute(_ text: String, after marker: String) -> String? {
        guard let start = text.range(of: marker) else { return nil }
        return String(text[start.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
            .replacingOccurrences(of: "&#x2F;", with: "/").replacingOccurrences(of: "&#x3D;", with: "=")
    }

    /// The query of an absolute redirect, decoded as a form.
    static func query(_ response: TestResponse) -> [String: String] {
        guard let location = response.headers[.location], let components = URLComponents(string: location) else { return [:] }
        var out: [String: String] = [:]
        for pair in (components.percentEncodedQuery ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            if parts.count == 2 { out[parts[0]] = parts[1] }
        }
        return out
    }
}

/// An authorization request's query, form-encoded.
func authorizeURI(_ fields: [(String, String)]) -> String {
    "/oauth/authorize?" + FormEncoding.encode(fields)
}

func pkcePair() -> (verifier: String, challenge: String) {
    WebWalk.pkce()
}

/// The hosted sign-in tests' server, clients and steps.
enum Hosted {
    /// A compact JWS's first two segments (and the dot before the signature) from literal JSON.
    static func jwt(header: String, claims: String) -> String {
        func segment(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return segment(header) + "." + segment(claims) + "."
    }

    static let spa = "https://app.example.com/cb"
    static let partnerRedirect = "https://partner.example.com/cb"
    static let issuer = "http://127.0.0.1:8080"

    /// A server with a first-party public client (`spa`) and a third-party confidential one (`partner`).
    static func start(
        _ spaSettings: [String] = [], configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> (TestServer, String) {
        let server = try await TestServer.start(.sqlite, configure: configure)
        _ = try await server.createClient(
            id: "spa", redirectURIs: [spa, "com.example.app:/cb"],
            settings: ["email_verification=off", "post_logout_redirect_uris=https://app.example.com/bye"] + spaSettings)
        let partner = try await server.createClient(
            id: "partner", kind: .confidential, redirectURIs: [partnerRedirect], settings: ["email_verification=off", "third_party=on"])
        return (server, try #require(partner.secret))
    }

    static func request(
        _ client: String = "spa", redirect: String = spa, challenge: String?, state: String = "st", extra: [(String, String)] = []
    )
        -> String
    {
        authorizeURI(
            [
                ("response_type", "code"), ("client_id", client), ("redirect_uri", redirect),
                ("scope", "openid profile email offline_access"),
                ("state", state), ("nonce", "n-1"),
            ]
                + (challenge.map { [("code_challenge", $0), ("code_challenge_method", "S256")] } ?? []) + extra)
    }

    /// Signs the jar's browser in through the sign-in page; returns the answer to the client.
    static func signIn(_ jar: HostedJar, _ uri: String, email: String, password: String) async throws -> TestResponse {
        let page = try await jar.open(uri)
        #expect(page.status == .ok, "\(page.text)")
        let action = try #require(HostedJar.action(page, form: "signin"), "\(page.text)")
        return try await jar.submit(action, [("email", email), ("password", password)], csrf: HostedJar.csrf(page))
    }

    static func exchange(
        _ client: some TestClientProtocol, code: String, verifier: String?, id: String = "spa", redirect: String = spa
    ) async throws
        -> TestResponse
    {
        var fields = ["grant_type": "authorization_code", "code": code, "client_id": id, "redirect_uri": redirect]
        if let verifier { fields["code_verifier"] = verifier }
        return try await client.form("/oauth/token", fields)
    }
}
