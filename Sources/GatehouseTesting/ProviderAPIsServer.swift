import Foundation
import GatehouseCore
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `scripts/social/provider_apis.py` on 127.0.0.1, in its own process: answers like Facebook's Graph
/// API, GitHub's REST API, X's API and a generic OAuth 2.0 server (authorize page, token endpoint,
/// introspection, userinfo), so the server under test calls real HTTP endpoints with their contracts.
public struct ProviderAPIsServer: Sendable {
    public let process: Process
    public let port: Int
    public var base: String { "http://127.0.0.1:\(port)" }

    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/social/provider_apis.py")

    struct NotStarted: Error, CustomStringConvertible {
        var description: String { "provider_apis.py did not start" }
    }

    public static func start() async throws -> ProviderAPIsServer {
        let port = try await HookServer.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--port", String(port)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try await Subprocess.launch(process)
        let server = ProviderAPIsServer(process: process, port: port)
        if try await eventually({ (try? await server.call("GET", "/_requests")) != nil ? true : nil }) != nil { return server }
        kill(process.processIdentifier, SIGKILL)
        throw NotStarted()
    }

    public func stop() { kill(process.processIdentifier, SIGKILL) }

    /// A user at `provider` (`facebook`, `github`, `x`, `oauth`): `id`, `name`, `email`, `email_verified`, ….
    public func putUser(_ provider: String, _ user: String, _ fields: [String: any Sendable]) async throws {
        _ = try await call("PUT", "/_users/\(provider)/\(user)", fields)
    }

    /// An app (OAuth client) registered at `provider` with its secret; `tokenLifetime` sets the
    /// `expires_in` of the access tokens its web flow and refreshes issue.
    public func putApp(_ provider: String, _ clientID: String, secret: String, tokenLifetime: Int? = nil) async throws {
        var body: [String: any Sendable] = ["secret": secret]
        if let tokenLifetime { body["token_lifetime"] = tokenLifetime }
        _ = try await call("PUT", "/_apps/\(provider)/\(clientID)", body)
    }

    /// A user access token the provider issued to `clientID` (registered or not: "another app").
    public func token(_ provider: String, clientID: String, user: String) async throws -> String {
        let answer = try await call("POST", "/_tokens", ["provider": provider, "client_id": clientID, "user": user])
        let object = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
        return object?["access_token"] as? String ?? ""
    }

    /// The person revoked the token at the provider.
    public func revoke(_ token: String) async throws {
        _ = try await call("DELETE", "/_tokens/" + token)
    }

    /// Every refresh token the provider issued is revoked (the people withdrew the apps' access).
    public func revokeRefreshTokens() async throws {
        _ = try await call("DELETE", "/_refresh_tokens")
    }

    /// Every API request the provider received (method, path, query, headers, body).
    public func requests() async throws -> [[String: Any]] {
        (try JSONSerialization.jsonObject(with: try await call("GET", "/_requests").body) as? [[String: Any]]) ?? []
    }

    @discardableResult
    func call(_ method: String, _ path: String, _ body: [String: any Sendable]? = nil) async throws -> NoRedirectHTTP.Answer {
        let answer = try await NoRedirectHTTP.send(
            method, URL(string: base + path)!, body: try body.map { try JSONSerialization.data(withJSONObject: $0) },
            headers: body == nil ? [:] : ["Content-Type": "application/json"])
        guard (200..<300).contains(answer.status) else { throw NotStarted() }
        return answer
    }
}

/// An HTTP client that never follows redirects, so a test sees each hop of a browser flow (and its
/// `Location` and cookies) the way a browser would receive it.
public enum NoRedirectHTTP {
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
        public var location: URL? { headers["location"].flatMap { URL(string: $0) } }
        /// `name=value` of the first Set-Cookie.
        public var cookie: String? { headers["set-cookie"].flatMap { $0.split(separator: ";").first.map(String.init) } }
    }

    final class Refuse: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest,
            completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) { completionHandler(nil) }
    }

    /// No cookie store: a test sends the cookies it means to (Foundation on Linux otherwise keeps a
    /// Set-Cookie and sends it on later requests, whatever `httpShouldHandleCookies` says).
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return URLSession(configuration: configuration, delegate: Refuse(), delegateQueue: nil)
    }()

    public static func send(_ method: String, _ url: URL, body: Data? = nil, headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        request.httpShouldHandleCookies = false
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Answer(status: http.statusCode, headers: fields, body: data)
    }

    /// A form POST (`application/x-www-form-urlencoded`).
    public static func form(_ url: URL, _ fields: [(String, String)], headers: [String: String] = [:]) async throws -> Answer {
        try await send(
            "POST", url, body: Data(FormEncoding.encode(fields).utf8),
            headers: headers.merging(["Content-Type": "application/x-www-form-urlencoded"]) { $1 })
    }
}

/// Providers answered by `scripts/social/provider_apis.py` (Facebook's, GitHub's, X's and a generic
/// OAuth server's APIs) on 127.0.0.1, with the operator's apps registered there.
public enum SocialFixtures {
    public static let facebookApp = ("fb-app", "fb-secret")
    public static let githubApp = ("gh-app", "gh-secret")
    public static let xApp = ("x-app", "x-secret")
    public static let oauthApp = ("oa-app", "oa-secret")

    public static func providers(_ fake: ProviderAPIsServer) -> [[String: Any]] {
        let base = fake.base
        return [
            [
                "id": "facebook", "type": "facebook", "client_ids": [facebookApp.0], "client_secret": facebookApp.1,
                "api_base": base + "/facebook",
                "authorization_endpoint": base + "/facebook/dialog/oauth", "token_endpoint": base + "/facebook/oauth/access_token",
            ],
            [
                "id": "github", "type": "github", "client_ids": [githubApp.0], "client_secret": githubApp.1, "api_base": base + "/github",
                "authorization_endpoint": base + "/github/login/oauth/authorize",
                "token_endpoint": base + "/github/login/oauth/access_token",
            ],
            [
                "id": "x", "type": "x", "client_ids": [xApp.0], "client_secret": xApp.1, "api_base": base + "/x",
                "authorization_endpoint": base + "/x/i/oauth2/authorize", "token_endpoint": base + "/x/2/oauth2/token",
            ],
            [
                "id": "acme", "type": "oauth2", "client_ids": [oauthApp.0], "client_secret": oauthApp.1,
                "authorization_endpoint": base + "/oauth/authorize", "token_endpoint": base + "/oauth/token",
                "userinfo_endpoint": base + "/oauth/userinfo", "introspection_endpoint": base + "/oauth/introspect",
            ],
        ]
    }

    /// The fake provider with the operator's apps, another app at each provider, and one person at each.
    public static func startProvider() async throws -> ProviderAPIsServer {
        let fake = try await ProviderAPIsServer.start()
        for (provider, app) in [("facebook", facebookApp), ("github", githubApp), ("x", xApp), ("oauth", oauthApp)] {
            try await fake.putApp(provider, app.0, secret: app.1)
            try await fake.putApp(provider, "other-app", secret: "other-secret")
        }
        try await fake.putUser(
            "facebook", "ada",
            ["id": "1001", "name": "Ada Lovelace", "first_name": "Ada", "last_name": "Lovelace", "email": "ada@fb.example"])
        try await fake.putUser("github", "octo", ["id": "4242", "name": "Octo Cat", "email": "octo@example.com", "email_verified": true])
        try await fake.putUser("x", "xena", ["id": "77001", "name": "Xena", "email": "xena@example.com"])
        try await fake.putUser("oauth", "olga", ["id": "u-77", "name": "Olga", "email": "olga@example.com", "email_verified": true])
        return fake
    }

    public static let appRedirect = "http://127.0.0.1:9/app/callback"
}
