import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// A user signed in through the real HTTP routes.
struct SignedIn {
    var email: String
    var password: String
    var accessToken: String
    var refreshToken: String
    var sessionID: String
}

extension TestServer {
    /// A client without email verification, so sign-up signs in at once.
    static let openClient = "open-app"

    static func startOpen(
        _ database: TestDatabase, logs: CapturedLogs? = nil, hooks: FlowHooks = FlowHooks(),
        assurance: (any AssurancePolicy)? = nil, factors: [any SecondFactor]? = nil, clock: TestClock = TestClock(),
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let server = try await TestServer.start(
            database, logs: logs, hooks: hooks, assurance: assurance, factors: factors, clock: clock, configure: configure)
        try await server.createClient(id: openClient, settings: ["email_verification=off"])
        return server
    }
}

/// Two nodes on one fresh PostgreSQL database, sharing its secret and issuer as the README sets them
/// up, each with its own process state, driven through their routers at the same time.
func withTwoNodes(
    limits: String? = nil,
    prepare: (TestServer) async throws -> Void = { _ in },
    _ body: @escaping @Sendable (any TestClientProtocol, any TestClientProtocol) async throws -> Void
) async throws {
    let shared = FileManager.default.temporaryDirectory.appendingPathComponent("gh-two-nodes-\(UUID())")
    try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: shared) }
    let secret = shared.appendingPathComponent("secret").path
    // One clock for both nodes, as one time for real machines: a second node started later must not
    // see the first node's fresh rotations as old (the refresh grace is 10 s).
    let clock = TestClock()
    let a = try await TestServer.startOpen(.postgres, clock: clock) {
        $0.secretFile = secret
        if let limits { try? $0.rateLimits.apply(limits) }
    }
    let url = a.server.configuration.databaseURL
    let b: TestServer
    do {
        b = try await TestServer.start(.postgres, clock: clock) {
            $0.databaseURL = url
            $0.secretFile = secret
            if let limits { try? $0.rateLimits.apply(limits) }
        }
    } catch {
        await a.stop()
        throw error
    }
    do {
        try await prepare(a)
        try await a.server.makeApplication(maintenance: false).test(.router) { one in
            try await b.server.makeApplication(maintenance: false).test(.router) { two in try await body(one, two) }
        }
    } catch {
        await b.stop()
        await a.stop()
        throw error
    }
    await b.stop()
    await a.stop()
}

func signUp(
    _ client: some TestClientProtocol, email: String = "user-\(UUID().uuidString.prefix(8))@example.com",
    password: String = "correct horse battery", clientID: String = TestServer.openClient
) async throws -> SignedIn {
    let response = try await client.json(
        .post, "/v1/signup", ["client_id": clientID, "email": email, "password": password])
    #expect(response.status == .created, "signup: \(response.text)")
    return try signedIn(response, email: email, password: password)
}

func logIn(
    _ client: some TestClientProtocol, email: String, password: String, clientID: String = TestServer.openClient
)
    async throws -> SignedIn
{
    let response = try await client.json(.post, "/v1/login", ["client_id": clientID, "email": email, "password": password])
    #expect(response.status == .ok, "login: \(response.text)")
    return try signedIn(response, email: email, password: password)
}

private func signedIn(_ response: TestResponse, email: String, password: String) throws -> SignedIn {
    let access = try #require(response.string("access_token"))
    let refresh = try #require(response.string("refresh_token"))
    let claims = try decodeClaims(access)
    return SignedIn(
        email: email, password: password, accessToken: access, refreshToken: refresh,
        sessionID: try #require(claims["sid"] as? String))
}

/// The payload of a JWT, unverified: for asserting on claims.
func decodeClaims(_ jwt: String) throws -> [String: Any] {
    let parts = jwt.split(separator: ".")
    try #require(parts.count == 3)
    return try #require(try JSONSerialization.jsonObject(with: try decodeSegment(String(parts[1]))) as? [String: Any])
}

/// base64url without padding, as in JWTs.
func decodeSegment(_ segment: String) throws -> Data {
    var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return try #require(Data(base64Encoded: base64))
}

func refresh(_ client: some TestClientProtocol, _ token: String, clientID: String = TestServer.openClient) async throws -> TestResponse {
    try await client.form("/oauth/token", ["grant_type": "refresh_token", "refresh_token": token, "client_id": clientID])
}

/// Opens a verification link the way a person does: the page it shows (which uses nothing), then the
/// page's form, posted with the page's cookie. Returns the page when it is not the form.
func confirmLink(
    _ client: some TestClientProtocol, _ path: String, action: String = "/verify", headers: HTTPFields = [:]
) async throws -> TestResponse {
    let page = try await client.json(.get, path, headers: headers)
    guard page.status == .ok, let cookie = page.headers[.setCookie]?.split(separator: ";").first else { return page }
    func field(_ name: String) -> String {
        guard let start = page.text.range(of: "name=\"\(name)\" value=\"") else { return "" }
        return String(page.text[start.upperBound...].prefix { $0 != "\"" })
    }
    var fields = HTTPFields()
    fields[.contentType] = "application/x-www-form-urlencoded"
    fields[.cookie] = String(cookie)
    for field in headers { fields.append(field) }
    let body = "token=\(field("token"))&csrf=\(field("csrf"))"
    return try await client.executeRequest(uri: action, method: .post, headers: fields, body: ByteBuffer(string: body))
}
