import Crypto
import Foundation
import Gatehouse
import GatehouseAPI
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Synchronization
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK binds its session to a key of the device (DPoP) because the server advertises it, and the
/// same tokens are useless to anyone without that key.
@Suite("SDK: DPoP")
struct DPoPSDKTests {
    static let clientID = "dpop-app"

    @Test(
        "SDK-DPOP-1: with DPoP on by default, a whole session against a live server: sign-up binds the tokens (token_type DPoP, cnf.jkt), authorizedData and authorize(_:) carry proofs, an expired token's 401 refreshes with a proof (the server's nonce answered once for a clock five minutes off) and retries, a relaunch restores the key, logout ends the session; the same access and refresh tokens without the key are refused"
    )
    func wholeSession() async throws {
        let server = try await TestServer.startLive()
        // The raw requests below carry proofs stamped with the real time and answer no nonce: a server
        // clock frozen at start fell more than the minute of skew behind it when a loaded machine took
        // that long to get here (a clean-clone CI run did), and refused them.
        server.clock.followRealTime()
        try await server.createClient(id: Self.clientID, settings: ["email_verification=off"])
        try await withLiveServer(server) { base in
            let store = InMemorySessionStore()
            let transport = RecordingTransport()
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: store, transport: transport))
            _ = try await client.signUp(email: "bound@example.com", password: "correct horse battery")
            let stored = try #require(try await store.load())
            #expect(stored.tokenType == "DPoP")
            let key = try #require(stored.dpopKey)
            #expect(key.kind == .software)
            let cnf = try accessClaims(stored.accessToken)["cnf"] as? [String: String]
            #expect(cnf?["jkt"]?.isEmpty == false, "\(String(describing: cnf))")

            let (data, response) = try await client.authorizedData(for: meRequest(base))
            #expect(response.statusCode == 200, "\(String(decoding: data, as: UTF8.self))")
            let authorized = try await client.authorize(meRequest(base))
            #expect(authorized.value(forHTTPHeaderField: "Authorization")?.hasPrefix("DPoP ") == true)
            #expect(try await raw(authorized).status == 200)

            // The same token without the key: as a bearer token, and under DPoP with no proof.
            var bearer = meRequest(base)
            bearer.setValue("Bearer \(stored.accessToken)", forHTTPHeaderField: "Authorization")
            let refused = try await raw(bearer)
            #expect(refused.status == 401)
            #expect(refused.challenge?.hasPrefix("DPoP ") == true)
            var unproved = meRequest(base)
            unproved.setValue("DPoP \(stored.accessToken)", forHTTPHeaderField: "Authorization")
            #expect(try await raw(unproved).status == 401)

            // The server's clock moves past the access token's lifetime and five minutes beyond the
            // device's: the 401 refreshes (the proof's iat is off, so the server hands out a nonce and
            // the SDK answers it once) and the call is retried.
            server.clock.advance(by: 20 * 60)
            let before = transport.answers.count
            let (_, afterExpiry) = try await client.authorizedData(for: meRequest(base))
            #expect(afterExpiry.statusCode == 200)
            let exchanged = transport.answers.dropFirst(before).map { "\($0.path) \($0.status) \($0.nonceAsked)" }
            #expect(
                exchanged == ["/v1/me 401 false", "/oauth/token 400 true", "/oauth/token 200 false", "/v1/me 200 false"],
                "\(exchanged)")
            let renewed = try #require(try await store.load())
            #expect(renewed.refreshToken != stored.refreshToken)
            #expect(renewed.tokenType == "DPoP" && renewed.dpopKey == key)

            // The refresh token without the key: refused.
            var copied = URLRequest(url: base.appendingPathComponent("oauth/token"))
            copied.httpMethod = "POST"
            copied.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            copied.httpBody = Data("grant_type=refresh_token&client_id=\(Self.clientID)&refresh_token=\(renewed.refreshToken)".utf8)
            let stolen = try await raw(copied)
            #expect(stolen.status == 400)
            #expect(stolen.body.contains("invalid_dpop_proof"), "\(stolen.body)")

            // A relaunch restores the session with its key and goes on.
            let relaunched = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: store))
            #expect(try await relaunched.authorizedData(for: meRequest(base)).1.statusCode == 200)
            let sid = try #require(try accessClaims(renewed.accessToken)["sid"] as? String)
            try await relaunched.signOut()
            let ended = try await server.persistence.read { try await $0.sessions.find(id: UUID(uuidString: sid)!) }
            #expect(ended?.revokedAt != nil, "logout with a proof ended the session on the server")
        }
    }

    @Test(
        "SDK-DPOP-3: a new client on a store that holds a bound session signs in at once (its proof made before the store is read) and keeps the key the server bound the new session to; signing out forgets the key, so the next sign-in has another"
    )
    func keyPerSession() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: Self.clientID, settings: ["email_verification=off"])
        try await withLiveServer(server) { base in
            let store = InMemorySessionStore()
            let password = "correct horse battery"
            let first = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: store))
            _ = try await first.signUp(email: "race@example.com", password: password)
            let old = try #require(try await store.load()?.dpopKey)

            let second = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: store))
            try await second.signIn(email: "race@example.com", password: password)
            let signedIn = try #require(try await store.load())
            let key = try #require(signedIn.dpopKey)
            #expect(key != old)
            try await second.refreshSession()
            #expect(try await second.authorizedData(for: meRequest(base)).1.statusCode == 200)

            try await second.signOut()
            try await second.signIn(email: "race@example.com", password: password)
            let again = try #require(try await store.load()?.dpopKey)
            #expect(again != key)
            try await second.refreshSession()
        }
    }

    @Test(
        "SDK-DPOP-4: a custom authenticator's key is the device key its sessions are bound to: cnf.jkt is the thumbprint of the public key the server registered for it, at registration (the session that registered, bound to another key, is ended with that key's proof) and at every sign-in with it, refreshes keep it, signing out keeps the authenticator's key; after signing out, a biometric sign-in (a key that asks the user) is bound to a key of its own"
    )
    func deviceAuthenticatorKey() async throws {
        let server = try await DeviceProfilesTests.server(hooks: FlowHooks([CustomDataHook()]))
        try await withLiveServer(server) { base in
            let (client, profiles) = DeviceProfilesTests.setUp(base, custom: [HardwareToken()])
            _ = try await client.signUp(email: "one-key@example.com", password: "correct horse battery")
            _ = try await profiles.registerBiometric()
            let registering = try await currentSessionID(client)
            let profile = try await profiles.registerCustom("hw-token")
            let custom = try #require(profile.authenticators.first { $0.type == .custom })
            let registered = try await registeredThumbprint(server, authenticatorID: custom.id)
            #expect(try await boundThumbprint(client) == registered, "registration's own session")
            // The session that registered (bound to another key) was ended on the server, with its own key's proof.
            let ended = try await server.persistence.read { try await $0.sessions.find(id: registering) }
            #expect(ended?.revokedAt != nil, "the registering session is still live")

            _ = await profiles.signOut()
            try await profiles.signIn(profile: profile, authenticator: custom)
            #expect(try await boundThumbprint(client) == registered)
            try await client.refreshSession()
            #expect(try await boundThumbprint(client) == registered)
            #expect(try await client.authorizedData(for: meRequest(base)).1.statusCode == 200)

            _ = await profiles.signOut()
            let biometric = try #require(profile.authenticators.first { $0.type == .biometric })
            let delegate = ScriptedDelegate(pins: [], biometricReason: "Unlock")
            #expect(await profiles.signIn(profile: profile, authenticator: biometric, delegate: delegate) != nil)
            let other = try await boundThumbprint(client)
            #expect(other != nil && other != registered)

            _ = await profiles.signOut()
            try await profiles.signIn(profile: profile, authenticator: custom)
            #expect(try await boundThumbprint(client) == registered, "signing out forgot the session's key, not the authenticator's")
        }
    }

    /// RFC 7638 thumbprint of the P-256 key the server keeps for a device authenticator.
    private func registeredThumbprint(_ server: TestServer, authenticatorID: String) async throws -> String {
        let credential = try #require(
            try await server.persistence.read { try await $0.credentials.find(id: authenticatorID) })
        let config = try credential.decodeConfig(DeviceAuthenticatorStrategy.Config.self)
        let point = try #require(Base64URL.decode(config.publicKey))
        let x = Base64URL.encode(Data(point.dropFirst().prefix(32)))
        let y = Base64URL.encode(Data(point.suffix(32)))
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        return Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8))))
    }

    /// The session (`sid`) of the client's current access token.
    private func currentSessionID(_ client: AuthClient) async throws -> UUID {
        let authorized = try await client.authorize(URLRequest(url: URL(string: "http://127.0.0.1/")!))
        let header = try #require(authorized.value(forHTTPHeaderField: "Authorization"))
        let token = String(try #require(header.split(separator: " ").last))
        let sid = try #require(try accessClaims(token)["sid"] as? String)
        return try #require(UUID(uuidString: sid))
    }

    /// The `cnf.jkt` of the client's current access token.
    private func boundThumbprint(_ client: AuthClient) async throws -> String? {
        let authorized = try await client.authorize(URLRequest(url: URL(string: "http://127.0.0.1/")!))
        let header = try #require(authorized.value(forHTTPHeaderField: "Authorization"))
        let token = String(try #require(header.split(separator: " ").last))
        return (try accessClaims(token)["cnf"] as? [String: String])?["jkt"]
    }

    @Test("SDK-DPOP-2: dpop: .off keeps bearer tokens; a server without DPoP in its discovery document gets no proofs")
    func optOut() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: Self.clientID, settings: ["email_verification=off"])
        try await withLiveServer(server) { base in
            let store = InMemorySessionStore()
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: store, dpop: .off))
            _ = try await client.signUp(email: "plain@example.com", password: "correct horse battery")
            let stored = try #require(try await store.load())
            #expect(stored.tokenType == "Bearer" && stored.dpopKey == nil)
            #expect(try accessClaims(stored.accessToken)["cnf"] == nil)
            #expect(try await client.authorizedData(for: meRequest(base)).1.statusCode == 200)
        }
    }

    private func accessClaims(_ jwt: String) throws -> [String: Any] {
        let parts = jwt.split(separator: ".")
        try #require(parts.count == 3)
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let payload = try #require(Data(base64Encoded: base64))
        return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
    }

    private func raw(_ request: URLRequest) async throws -> (status: Int, body: String, challenge: String?) {
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, String(decoding: data, as: UTF8.self), http.value(forHTTPHeaderField: "WWW-Authenticate"))
    }
}

/// URLSession underneath, remembering each answer's path, status and whether it asked for a DPoP nonce.
final class RecordingTransport: HTTPTransport {
    struct Answer: Sendable {
        var path: String
        var status: Int
        var nonceAsked: Bool
    }

    private let base = URLSessionTransport()
    private let recorded = Mutex<[Answer]>([])
    var answers: [Answer] { recorded.withLock { $0 } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await base.send(request)
        let asked = String(decoding: data, as: UTF8.self).contains("use_dpop_nonce")
        recorded.withLock { $0.append(Answer(path: request.url?.path ?? "", status: response.statusCode, nonceAsked: asked)) }
        return (data, response)
    }
}
