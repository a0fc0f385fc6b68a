import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOFoundationEssentialsCompat
import Testing

/// Dynamic client registration (RFC 7591) behind an operator's initial access token, and its
/// management (RFC 7592).
@Suite("Dynamic client registration")
struct RegistrationTests {
    static func register(_ client: some TestClientProtocol, _ metadata: [String: Any], token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.executeRequest(
            uri: "/oauth/register", method: .post, headers: headers,
            body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: metadata)))
    }

    static func call(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, token: String?
    ) async throws -> TestResponse {
        try await client.executeRequest(
            uri: uri, method: method, headers: token.map { [.authorization: "Bearer \($0)"] } ?? [:], body: nil)
    }

    @Test(
        "DCR-1: registration without an initial access token, or with a made-up one, is 401 (bad metadata too); bad metadata is 400 invalid_redirect_uri or invalid_client_metadata and leaves the token unspent; a token from the admin API registers one client (secret and registration token once) and only one; that client signs a user in through the hosted pages (as a third party: consent asked) and gets RS256 ID tokens; its registration token reads the registration and deletes the client, which then cannot authenticate"
    )
    func registration() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let ops = try await server.createClient(id: "ops", kind: .confidential)
        _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(
            id: "ops", settings: [], scopes: ["admin:clients"])
        try await server.withRouter { client in
            let metadata: [String: Any] = [
                "client_name": "Dynamic app", "redirect_uris": ["https://dyn.example/cb"],
                "grant_types": ["authorization_code", "refresh_token"],
                "scope": "openid profile email", "backchannel_logout_uri": "https://dyn.example/logout", "unknown_member": 7,
            ]
            #expect(try await Self.register(client, metadata, token: nil).status == .unauthorized)
            // Without a token even bad metadata is 401: the checks are not shown to strangers.
            #expect(try await Self.register(client, ["redirect_uris": ["javascript:x"]], token: nil).status == .unauthorized)
            #expect(try await Self.register(client, metadata, token: "gh_iat_made-up").status == .unauthorized)

            let opsSecret = try #require(ops.secret)
            let admin = try #require(
                try await client.form(
                    "/oauth/token", ["grant_type": "client_credentials", "scope": "admin:clients"], basic: ("ops", opsSecret)
                )
                .string("access_token"))
            let issued = try await client.json(.post, "/admin/v1/registration-tokens", ["ttl": 600], bearer: admin)
            #expect(issued.status == .created, "\(issued.text)")
            let token = try #require(issued.string("token"))

            for (bad, error) in [
                (metadata.merging(["redirect_uris": [String]()]) { _, b in b }, "invalid_redirect_uri"),
                (metadata.merging(["redirect_uris": ["javascript:alert(1)"]]) { _, b in b }, "invalid_redirect_uri"),
                (metadata.merging(["grant_types": ["implicit"]]) { _, b in b }, "invalid_client_metadata"),
                (metadata.merging(["scope": "openid admin:users"]) { _, b in b }, "invalid_client_metadata"),
                (metadata.merging(["backchannel_logout_uri": "http://dyn.example/logout"]) { _, b in b }, "invalid_client_metadata"),
            ] as [([String: Any], String)] {
                let refused = try await Self.register(client, bad, token: token)
                #expect(refused.status == .badRequest && refused.string("error") == error, "\(error): \(refused.text)")
            }

            let registered = try await Self.register(client, metadata, token: token)
            #expect(registered.status == .created && registered.headers[.cacheControl] == "no-store", "\(registered.text)")
            let clientID = try #require(registered.string("client_id"))
            let secret = try #require(registered.string("client_secret"))
            let access = try #require(registered.string("registration_access_token"))
            #expect(registered.string("registration_client_uri") == "http://127.0.0.1:8080/oauth/register/\(clientID)")
            #expect(registered.string("token_endpoint_auth_method") == "client_secret_basic" && registered.object["unknown_member"] == nil)
            // The token registered one client: the same token again is refused.
            #expect(try await Self.register(client, metadata, token: token).status == .unauthorized)

            // The registered client signs a user in: sign-in page, then (a third party) consent.
            let user = try await signUp(client)
            // A registered client verifies addresses (the default): this user's is proved.
            let subject = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let userID = try #require(UUID(uuidString: subject))
            try await server.persistence.transaction { stores in
                var record = try #require(try await stores.users.find(id: userID))
                record.emailVerified = true
                try await stores.users.update(record)
            }
            let jar = HostedJar(client)
            let uri = authorizeURI([
                ("response_type", "code"), ("client_id", clientID), ("redirect_uri", "https://dyn.example/cb"), ("scope", "openid email"),
                ("state", "dyn"), ("nonce", "n-dyn"),
            ])
            let consentPage = try await Hosted.signIn(jar, uri, email: user.email, password: user.password)
            let consent = try #require(HostedJar.action(consentPage, form: "consent"), "a registered client is a third party")
            let answer = try await jar.submit(consent, [("decision", "allow")], csrf: HostedJar.csrf(consentPage))
            let code = try #require(HostedJar.query(answer)["code"], "\(answer.status) \(answer.text.prefix(300))")
            let tokens = try await client.form(
                "/oauth/token", ["grant_type": "authorization_code", "code": code, "redirect_uri": "https://dyn.example/cb"],
                basic: (clientID, secret))
            #expect(tokens.status == .ok, "\(tokens.text)")
            let idToken = try #require(tokens.string("id_token"))
            #expect(try decodeClaims(idToken)["aud"] as? String == clientID)
            let header =
                try JSONSerialization.jsonObject(with: try decodeSegment(String(idToken.split(separator: ".")[0]))) as? [String: Any]
            #expect(header?["alg"] as? String == "RS256")

            // RFC 7592: the registration token reads and deletes; nothing else does.
            let path = "/oauth/register/\(clientID)"
            #expect(try await Self.call(client, .get, path, token: token).status == .unauthorized)
            #expect(try await Self.call(client, .get, "/oauth/register/ops", token: access).status == .unauthorized)
            let read = try await Self.call(client, .get, path, token: access)
            #expect(read.status == .ok && read.string("client_id") == clientID && read.string("client_secret") == nil, "\(read.text)")
            #expect(read.string("backchannel_logout_uri") == "https://dyn.example/logout")
            #expect(try await Self.call(client, .delete, path, token: access).status == .noContent)
            #expect(try await Self.call(client, .get, path, token: access).status == .unauthorized)
            let gone = try await client.form("/oauth/token", ["grant_type": "client_credentials"], basic: (clientID, secret))
            #expect(gone.status == .unauthorized)
            let audit = try await AuditLog(persistence: server.persistence).list(AuditQuery(type: "admin.client.created"))
            #expect(audit.contains { $0.clientID == clientID && $0.actor == "registration" })
        }
    }

    @Test(
        "DCR-3: dpop_bound_access_tokens (RFC 9449 §5.2): true registers a client whose tokens need a proof (dpop=required: a sign-in without one is refused), read back as true; left out it is false and proofs stay optional; a value that is not a boolean is invalid_client_metadata"
    )
    func dpopBoundRegistration() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let ops = try await server.createClient(id: "ops", kind: .confidential)
        _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(
            id: "ops", settings: [], scopes: ["admin:clients"])
        try await server.withRouter { client in
            let opsSecret = try #require(ops.secret)
            let admin = try #require(
                try await client.form(
                    "/oauth/token", ["grant_type": "client_credentials", "scope": "admin:clients"], basic: ("ops", opsSecret)
                )
                .string("access_token"))
            func registrationToken() async throws -> String {
                try #require(try await client.json(.post, "/admin/v1/registration-tokens", ["ttl": 600], bearer: admin).string("token"))
            }
            let metadata: [String: Any] = [
                "client_name": "Bound app", "redirect_uris": ["https://bound.example/cb"], "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
            ]
            let token = try await registrationToken()
            let refused = try await Self.register(client, metadata.merging(["dpop_bound_access_tokens": "yes"]) { $1 }, token: token)
            #expect(refused.status == .badRequest && refused.string("error") == "invalid_client_metadata", "\(refused.text)")

            let bound = try await Self.register(client, metadata.merging(["dpop_bound_access_tokens": true]) { $1 }, token: token)
            #expect(bound.status == .created, "\(bound.text)")
            #expect(bound.object["dpop_bound_access_tokens"] as? Bool == true)
            let boundID = try #require(bound.string("client_id"))
            let stored = try await server.persistence.read { try await $0.clients.find(id: boundID) }
            #expect(stored?.settings.dpop == .required)
            let access = try #require(bound.string("registration_access_token"))
            let read = try await Self.call(client, .get, "/oauth/register/\(boundID)", token: access)
            #expect(read.object["dpop_bound_access_tokens"] as? Bool == true)
            // The setting does what it says: a sign-in for this client without a proof is refused.
            // (Verification off, so a sign-up starts a session; the server caches a client for a second.)
            _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(
                id: boundID, settings: ["email_verification=off"])
            try await Task.sleep(for: .milliseconds(1100))
            let unproved = try await client.json(
                .post, "/v1/signup", ["client_id": boundID, "email": "bound@example.com", "password": "correct horse battery"])
            #expect(unproved.status == .badRequest && unproved.string("code") == "invalid_dpop_proof", "\(unproved.text)")

            let second = try await registrationToken()
            let plain = try await Self.register(client, metadata, token: second)
            #expect(plain.status == .created && plain.object["dpop_bound_access_tokens"] as? Bool == false, "\(plain.text)")
            let plainID = try #require(plain.string("client_id"))
            #expect(try await server.persistence.read { try await $0.clients.find(id: plainID) }?.settings.dpop == .allowed)
        }
    }

    static func put(
        _ client: some TestClientProtocol, _ path: String, _ metadata: [String: Any], token: String
    ) async throws -> TestResponse {
        try await client.executeRequest(
            uri: path, method: .put, headers: [.contentType: "application/json", .authorization: "Bearer \(token)"],
            body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: metadata)))
    }

    @Test(
        "DCR-2: a pairwise registration names a sector_identifier_uri, fetched from a real HTTP server, that must list every redirect URI (else 400 and the token unspent), and its host becomes the sector; RFC 7592 update (PUT) with the registration token replaces the metadata (left-out members back to their defaults) while the sector stays; an update without client_id, with registration_access_token, with another client's secret or changing public/confidential is 400 invalid_client_metadata, with another token 401"
    )
    func update() async throws {
        let listed = ["https://pw.example/cb", "https://pw2.example/cb"]
        let sectorJSON = String(decoding: try JSONSerialization.data(withJSONObject: listed), as: UTF8.self)
        let sectorHost = try await HookServer.start { _ in HookServer.Answer(status: 200, body: sectorJSON) }
        let server = try await TestServer.startOpen(.sqlite)
        do {
            let registration = ClientRegistration(persistence: server.persistence, clock: server.clock)
            let (token, _) = try await registration.issueInitialAccessToken(actor: .commandLine)
            try await server.withRouter { client in
                let sectorURI = "http://127.0.0.1:\(sectorHost.port)/jwks"
                let metadata: [String: Any] = [
                    "client_name": "Pairwise app", "redirect_uris": listed, "subject_type": "pairwise", "sector_identifier_uri": sectorURI,
                ]
                for bad in [
                    metadata.merging(["redirect_uris": listed + ["https://unlisted.example/cb"]]) { _, b in b },
                    metadata.filter { $0.key != "sector_identifier_uri" },
                ] {
                    let refused = try await Self.register(client, bad, token: token)
                    #expect(refused.status == .badRequest && refused.string("error") == "invalid_client_metadata", "\(refused.text)")
                }
                let registered = try await Self.register(client, metadata, token: token)
                #expect(registered.status == .created && registered.string("subject_type") == "pairwise", "\(registered.text)")
                let clientID = try #require(registered.string("client_id"))
                let access = try #require(registered.string("registration_access_token"))
                let secret = try #require(registered.string("client_secret"))
                let path = "/oauth/register/\(clientID)"
                func sector() async throws -> String? {
                    let found = try await server.persistence.read { try await $0.clients.find(id: clientID) }
                    return found?.settings.sectorIdentifier
                }
                #expect(try await sector() == "127.0.0.1")

                let replacement: [String: Any] = [
                    "client_id": clientID, "client_name": "Renamed", "redirect_uris": ["https://pw2.example/cb"],
                    "subject_type": "pairwise",
                    "backchannel_logout_uri": "https://pw2.example/bcl", "client_secret": secret,
                ]
                for bad in [
                    replacement.filter { $0.key != "client_id" },
                    replacement.merging(["registration_access_token": access]) { _, b in b },
                    replacement.merging(["client_secret": "gh_cs_not-it"]) { _, b in b },
                    replacement.merging(["token_endpoint_auth_method": "none"]) { _, b in b },
                ] {
                    let refused = try await Self.put(client, path, bad, token: access)
                    #expect(refused.status == .badRequest && refused.string("error") == "invalid_client_metadata", "\(refused.text)")
                }
                #expect(try await Self.put(client, path, replacement, token: token).status == .unauthorized)
                let updated = try await Self.put(client, path, replacement, token: access)
                #expect(updated.status == .ok && updated.string("client_name") == "Renamed", "\(updated.text)")
                #expect(updated.string("backchannel_logout_uri") == "https://pw2.example/bcl" && updated.string("client_secret") == nil)
                #expect(updated.string("registration_access_token") == access)
                #expect(try await sector() == "127.0.0.1")

                // Left out, the back-channel URI goes back to its default (none).
                let again = try await Self.put(client, path, replacement.filter { $0.key != "backchannel_logout_uri" }, token: access)
                #expect(again.status == .ok && again.object["backchannel_logout_uri"] == nil, "\(again.text)")
                let read = try await Self.call(client, .get, path, token: access)
                #expect(read.string("client_name") == "Renamed" && read.object["backchannel_logout_uri"] == nil)
                #expect((read.object["redirect_uris"] as? [String]) == ["https://pw2.example/cb"])
                let audit = try await AuditLog(persistence: server.persistence).list(AuditQuery(type: "admin.client.updated"))
                #expect(audit.filter { $0.clientID == clientID && $0.actor == "registration" }.count == 2)
            }
        } catch {
            await sectorHost.stop()
            await server.stop()
            throw error
        }
        await sectorHost.stop()
        await server.stop()
    }
}
