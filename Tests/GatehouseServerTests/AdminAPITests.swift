import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@Suite("Admin API")
struct AdminAPITests {
    /// Every admin route, with the area its scope names and whether it writes.
    static let routes: [(method: HTTPRequest.Method, path: String, area: String, writes: Bool)] = [
        (.get, "/admin/v1/users", AdminScope.users, false),
        (.post, "/admin/v1/users", AdminScope.users, true),
        (.get, "/admin/v1/users/{user}", AdminScope.users, false),
        (.patch, "/admin/v1/users/{user}", AdminScope.users, true),
        (.delete, "/admin/v1/users/{user}", AdminScope.users, true),
        (.post, "/admin/v1/users/{user}/disable", AdminScope.users, true), (.post, "/admin/v1/users/{user}/enable", AdminScope.users, true),
        (.post, "/admin/v1/users/{user}/sign-out", AdminScope.users, true),
        (.post, "/admin/v1/users/{user}/password-reset", AdminScope.users, true),
        (.get, "/admin/v1/users/{user}/export", AdminScope.users, false),
        (.get, "/admin/v1/users/{user}/sessions", AdminScope.users, false),
        (.get, "/admin/v1/users/{user}/factors", AdminScope.users, false),
        (.post, "/admin/v1/users/{user}/factors/reset", AdminScope.users, true),
        (.delete, "/admin/v1/users/{user}/passkeys/some-passkey", AdminScope.users, true),
        (.delete, "/admin/v1/sessions/{session}", AdminScope.users, true),
        (.get, "/admin/v1/clients", AdminScope.clients, false),
        (.post, "/admin/v1/clients", AdminScope.clients, true),
        (.get, "/admin/v1/clients/open-app", AdminScope.clients, false),
        (.patch, "/admin/v1/clients/open-app", AdminScope.clients, true),
        (.delete, "/admin/v1/clients/open-app", AdminScope.clients, true),
        (.post, "/admin/v1/registration-tokens", AdminScope.clients, true),
        (.get, "/admin/v1/keys", AdminScope.keys, false),
        (.post, "/admin/v1/keys/rotate", AdminScope.keys, true),
        (.post, "/admin/v1/keys/some-kid/revoke", AdminScope.keys, true),
        (.get, "/admin/v1/audit", AdminScope.audit, false),
    ]

    @Test(
        "AD-1: every admin route refuses no token, a user's token and a client token without an admin scope (401); admin:read reads but every write is 403; an area's scope opens that area only; nothing changed"
    )
    func scopes() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client, email: "victim@example.com")
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let plain = try await adminToken(server, client, id: "backend", scopes: ["orders:read"])
            let reader = try await adminToken(server, client, id: "reader", scopes: [AdminScope.read])
            let clientsOnly = try await adminToken(server, client, id: "clients-op", scopes: [AdminScope.clients])
            let auditor = try await adminToken(server, client, id: "auditor", scopes: [AdminScope.audit])
            let kidBefore = server.server.keys.currentKID(.es256)
            let body: [String: any Sendable] = ["name": "x"]

            for route in Self.routes {
                let path = route.path.replacingOccurrences(of: "{user}", with: userID)
                    .replacingOccurrences(of: "{session}", with: user.sessionID)
                let sendsBody = route.method == .post || route.method == .patch
                for (who, token) in [("nobody", nil), ("a user", user.accessToken), ("a plain client", plain)] as [(String, String?)] {
                    let answer = try await client.json(route.method, path, sendsBody ? body : nil, bearer: token)
                    #expect(answer.status == .unauthorized, "\(who) → \(route.method) \(path): \(answer.status) \(answer.text)")
                    #expect(answer.headers[.contentType] == "application/problem+json")
                }
                let read = try await client.json(route.method, path, sendsBody ? body : nil, bearer: reader)
                if route.writes {
                    #expect(read.status == .forbidden, "admin:read → \(route.method) \(path): \(read.status)")
                } else {
                    #expect(read.status == .ok, "admin:read → \(route.method) \(path): \(read.status) \(read.text)")
                }
                // An area's own scope: in its area it passes the scope check (whatever the body then
                // gets), elsewhere it is refused.
                for (scope, token) in [(AdminScope.clients, clientsOnly), (AdminScope.audit, auditor)] where route.area != scope {
                    let other = try await client.json(route.method, path, sendsBody ? body : nil, bearer: token)
                    #expect(other.status == .forbidden, "\(scope) → \(route.method) \(path): \(other.status)")
                }
            }
            // No refusal changed anything: the user still signs in, the session lives, the key stands.
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .ok)
            _ = try await logIn(client, email: user.email, password: user.password)
            #expect(server.server.keys.currentKID(.es256) == kidBefore)
            #expect(try await server.services.clients.resolve(TestServer.openClient).id == TestServer.openClient)
            // The area's own scope does write in its area.
            let created = try await client.json(
                .post, "/admin/v1/clients", ["name": "Made by API", "client_id": "made"], bearer: clientsOnly)
            #expect(created.status == .created, "\(created.text)")
        }
    }

    @Test(
        "AD-2: users are paged by an opaque cursor; users signing up between pages never repeat or hide one already there; filters by email prefix, credential, state and dates",
        arguments: TestDatabase.available)
    func pagination(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let admin = try await adminToken(server, client, id: "ops", scopes: [AdminScope.all])
            var originals: Set<String> = []
            for n in 0..<23 {
                // Several per millisecond, as under load: the id breaks the tie.
                if n % 4 == 0 { server.clock.advance(by: 1) }
                let made = try await client.json(
                    .post, "/admin/v1/users", ["email": "page-\(n)@example.com", "email_verified": true], bearer: admin)
                #expect(made.status == .created, "\(made.text)")
                originals.insert(try #require(made.string("id")))
            }
            let cutoff = server.clock.now()
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await client.json(
                    .get, "/admin/v1/users?email=page-&limit=5" + (cursor.map { "&cursor=\($0)" } ?? ""), bearer: admin)
                #expect(page.status == .ok, "\(page.text)")
                let users = page.object["users"] as? [[String: Any]] ?? []
                seen += users.compactMap { $0["id"] as? String }
                cursor = page.string("next_cursor")
                pages += 1
                // Sign-ups land while the operator pages.
                server.clock.advance(by: 1)
                _ = try await client.json(.post, "/admin/v1/users", ["email": "page-late-\(pages)@example.com"], bearer: admin)
            } while cursor != nil && pages < 20
            #expect(Set(seen).isSuperset(of: originals), "every user present before paging began is listed")
            #expect(seen.count == Set(seen).count, "no user is listed twice")

            // Filters.
            let before = try await client.json(
                .get,
                "/admin/v1/users?email=page-&created_before=\(cutoff.addingTimeInterval(0.5).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))&limit=200",
                bearer: admin)
            #expect((before.object["users"] as? [[String: Any]])?.count == 23, "\(before.text)")
            let withPassword = try await client.json(.get, "/admin/v1/users?provider=password&limit=200", bearer: admin)
            #expect((withPassword.object["users"] as? [[String: Any]])?.isEmpty == true, "admin-made users without a password have none")
            _ = try await signUp(client, email: "signed-up@example.com")
            let passwords = try await client.json(.get, "/admin/v1/users?provider=password", bearer: admin)
            #expect((passwords.object["users"] as? [[String: Any]])?.compactMap { $0["email"] as? String } == ["signed-up@example.com"])
            // LIKE's wildcards are literal in a prefix.
            let wildcard = try await client.json(.get, "/admin/v1/users?email=%25", bearer: admin)
            #expect((wildcard.object["users"] as? [[String: Any]])?.isEmpty == true, "\(wildcard.text)")
            for bad in ["cursor=not-ours", "limit=0", "limit=abc", "created_after=yesterday", "id=42", "state=gone"] {
                let refused = try await client.json(.get, "/admin/v1/users?\(bad)", bearer: admin)
                #expect(
                    refused.status == .badRequest && refused.headers[.contentType] == "application/problem+json",
                    "\(bad): \(refused.status)")
            }
        }
    }

    @Test(
        "AD-3: deleting a user ends their tokens and removes credentials, identifiers, device authenticators, sessions, codes and pending mail; the deletion is audited with the admin and the request id",
        arguments: TestDatabase.available)
    func deletion(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let admin = try await adminToken(server, client, id: "ops", scopes: [AdminScope.users, AdminScope.audit])
            let user = try await signUp(client, email: "leaving@example.com")
            let subject = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let userID = try #require(UUID(uuidString: subject))
            var device = TestDevice()
            #expect(try await client.register(&device, bearer: user.accessToken).status == .created)
            // A code waiting in the outbox, and a second session.
            #expect(
                try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email]).status == .accepted)
            let second = try await logIn(client, email: user.email, password: user.password)

            let deleted = try await client.json(.delete, "/admin/v1/users/\(userID)", bearer: admin)
            #expect(deleted.status == .noContent, "\(deleted.text)")
            let requestID = try #require(deleted.headers[HTTPField.Name("Request-Id")!])

            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", bearer: second.accessToken).status == .unauthorized)
            #expect(try await refresh(client, second.refreshToken).status == .badRequest)
            #expect(try await client.challenge(device).status != .ok)
            let relogin = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            #expect(relogin.status == .unauthorized)
            #expect(try await client.json(.get, "/admin/v1/users/\(userID)", bearer: admin).status == .notFound)
            #expect(try await client.json(.delete, "/admin/v1/users/\(userID)", bearer: admin).status == .notFound)

            let left = try await server.persistence.read { stores in
                (
                    try await stores.credentials.list(userID: userID, type: nil).count,
                    try await stores.credentials.find(type: .password, identifier: user.email) == nil,
                    try await stores.directory.sessions(userID: userID, limit: 100).count,
                    try await stores.codes.findOpen(purpose: .recovery, identifier: user.email, clientID: TestServer.openClient) == nil,
                    try await stores.outbox.list(status: nil, channel: .email, limit: 100).filter { $0.recipient == user.email }.count
                )
            }
            #expect(left.0 == 0 && left.1 && left.2 == 0 && left.3 && left.4 == 0, "\(left)")
            // The address is free again.
            _ = try await signUp(client, email: user.email)

            let audit = try await client.json(.get, "/admin/v1/audit?type=admin.user.deleted", bearer: admin)
            let event = try #require((audit.object["events"] as? [[String: Any]])?.first)
            #expect(event["actor"] as? String == "client:ops")
            #expect(event["request_id"] as? String == requestID)
            #expect(event["method"] as? String == "admin")
        }
    }

    @Test(
        "AD-4: the export holds the user's profile, metadata, credentials, sessions, terms and audit events, and no hash, key, token or password"
    )
    func export() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let admin = try await adminToken(server, client, id: "ops", scopes: [AdminScope.all])
            let user = try await signUp(client, email: "export@example.com")
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let metadata: [String: any Sendable] = ["plan": "pro"]
            let profile: [String: any Sendable] = ["given_name": "Ada", "metadata": metadata]
            _ = try await client.json(.patch, "/v1/me", ["profile": profile], bearer: user.accessToken)
            _ = try await client.json(.patch, "/admin/v1/users/\(userID)", ["app_metadata": ["tier": "gold"]], bearer: admin)
            var device = TestDevice()
            #expect(try await client.register(&device, bearer: user.accessToken).status == .created)
            let later = try await logIn(client, email: user.email, password: user.password)

            let export = try await client.json(.get, "/admin/v1/users/\(userID)/export", bearer: admin)
            #expect(export.status == .ok, "\(export.text)")
            #expect(export.headers[.cacheControl] == "no-store")
            let body = export.object
            let exported = try #require(body["user"] as? [String: Any])
            #expect(exported["email"] as? String == "export@example.com")
            #expect((exported["profile"] as? [String: Any])?["given_name"] as? String == "Ada")
            #expect(((exported["profile"] as? [String: Any])?["metadata"] as? [String: Any])?["plan"] as? String == "pro")
            #expect((exported["app_metadata"] as? [String: Any])?["tier"] as? String == "gold")
            let credentials = try #require(body["credentials"] as? [[String: Any]])
            #expect(Set(credentials.compactMap { $0["type"] as? String }) == ["password", "device_authenticator"])
            #expect((body["sessions"] as? [[String: Any]])?.count == 2)
            let events = (body["audit_events"] as? [[String: Any]])?.compactMap { $0["type"] as? String } ?? []
            #expect(
                events.contains("user.created") && events.contains("user.signed_in") && events.contains("admin.user.updated"), "\(events)")

            // Nothing that signs in: no password, hash, token, token hash or device key.
            let stored = try await server.persistence.read { stores in
                try await stores.credentials.list(userID: UUID(uuidString: userID)!, type: nil)
            }
            var secrets = [
                user.password, user.accessToken, user.refreshToken, later.accessToken, later.refreshToken, device.publicKey,
                Secrets.sha256Hex(user.refreshToken), "$argon2", "hashed_password", "public_key",
            ]
            secrets += stored.map(\.config)
            for secret in secrets {
                #expect(!export.text.contains(secret), "the export holds \(secret.prefix(24))…")
            }
        }
    }

    @Test(
        "AD-5: disable ends sessions and refuses sign-in until enabled; sign-out ends every session; a changed email signs in and the old one does not; one session revoked by id; a reset mail goes out"
    )
    func accountActions() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let admin = try await adminToken(server, client, id: "ops", scopes: [AdminScope.users])
            let user = try await signUp(client, email: "acted@example.com")
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)

            let disabled = try await client.json(.post, "/admin/v1/users/\(userID)/disable", bearer: admin)
            #expect(disabled.status == .ok && disabled.string("state") == "disabled", "\(disabled.text)")
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status != .ok)
            #expect(try await refresh(client, user.refreshToken).status == .badRequest)
            let refused = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            #expect(refused.status == .forbidden && refused.string("code") == "account_disabled", "\(refused.text)")
            #expect(try await client.json(.post, "/admin/v1/users/\(userID)/enable", bearer: admin).string("state") == "active")

            let one = try await logIn(client, email: user.email, password: user.password)
            let two = try await logIn(client, email: user.email, password: user.password)
            let revokeOne = try await client.json(.delete, "/admin/v1/sessions/\(one.sessionID)", bearer: admin)
            #expect(revokeOne.status == .noContent)
            #expect(try await refresh(client, one.refreshToken).status == .badRequest)
            #expect(try await refresh(client, two.refreshToken).status == .ok)
            let sessions = try await client.json(.get, "/admin/v1/users/\(userID)/sessions", bearer: admin)
            let reasons = (sessions.object["sessions"] as? [[String: Any]])?.compactMap { $0["revoke_reason"] as? String } ?? []
            #expect(reasons.contains("admin_revoked") && reasons.count >= 2, "\(sessions.text)")
            let signOut = try await client.json(.post, "/admin/v1/users/\(userID)/sign-out", bearer: admin)
            #expect(signOut.status == .ok && (signOut.object["revoked_sessions"] as? Int ?? 0) >= 1, "\(signOut.text)")
            #expect(try await client.json(.get, "/v1/me", bearer: two.accessToken).status == .unauthorized)

            let moved = try await client.json(
                .patch, "/admin/v1/users/\(userID)", ["email": "Moved@Example.com", "email_verified": true], bearer: admin)
            #expect(moved.status == .ok && moved.string("email") == "moved@example.com", "\(moved.text)")
            _ = try await logIn(client, email: "moved@example.com", password: user.password)
            let old = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            #expect(old.status == .unauthorized)
            _ = try await signUp(client, email: "taken@example.com")
            let clash = try await client.json(.patch, "/admin/v1/users/\(userID)", ["email": "taken@example.com"], bearer: admin)
            #expect(clash.status == .conflict, "\(clash.text)")
            let invalid = try await client.json(.patch, "/admin/v1/users/\(userID)", ["email": "not an address"], bearer: admin)
            #expect(invalid.status == .unprocessableContent, "\(invalid.text)")

            #expect(try await client.json(.post, "/admin/v1/users/\(userID)/password-reset", bearer: admin).status == .noContent)
            try await server.deliverMail()
            #expect(server.lastMail(to: "moved@example.com", kind: "recovery") != nil)
            let created = try await client.json(
                .post, "/admin/v1/users", ["email": "weak@example.com", "password": "short"], bearer: admin)
            #expect(created.status == .unprocessableContent, "\(created.text)")
        }
    }

    @Test(
        "AD-6: clients and keys through the API as through the CLI (secret once, settings checked, key rotation in the JWKS); every change is an admin.* audit event naming the credential"
    )
    func clientsKeysAudit() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let ops = try await adminCredential(server, client, id: "ops", scopes: [AdminScope.all])
            var admin = ops.token
            let made = try await client.json(
                .post, "/admin/v1/clients",
                [
                    "client_id": "web", "name": "Web", "type": "confidential", "redirect_uris": ["https://app.example.com/cb"],
                    "settings": ["email_verification": "off"],
                ], bearer: admin)
            #expect(made.status == .created, "\(made.text)")
            let secret = try #require(made.string("client_secret"))
            #expect(try await client.json(.get, "/admin/v1/clients/web", bearer: admin).string("client_secret") == nil)
            let token = try await client.form("/oauth/token", ["grant_type": "client_credentials"], basic: ("web", secret))
            #expect(token.status == .ok)
            let badSetting = try await client.json(.patch, "/admin/v1/clients/web", ["settings": ["no_such_setting": "1"]], bearer: admin)
            #expect(badSetting.status == .badRequest, "\(badSetting.text)")
            let badURI = try await client.json(.patch, "/admin/v1/clients/web", ["redirect_uris": ["javascript:alert(1)"]], bearer: admin)
            #expect(badURI.status == .badRequest)
            server.clock.advance(by: 1)  // events of one millisecond are ordered by id, not by time
            let renamed = try await client.json(.patch, "/admin/v1/clients/web", ["name": "Web app"], bearer: admin)
            #expect(renamed.string("name") == "Web app")
            server.clock.advance(by: 1)  // events of one millisecond are ordered by id, not by time
            #expect(try await client.json(.delete, "/admin/v1/clients/web", bearer: admin).status == .noContent)
            #expect(try await client.json(.get, "/admin/v1/clients/web", bearer: admin).status == .notFound)

            let before = try await client.json(.get, "/admin/v1/keys", bearer: admin)
            // The ES256 key: it signed the admin's own token.
            let oldKid = try #require(
                (before.object["keys"] as? [[String: Any]])?.first {
                    $0["current"] as? Bool == true && $0["algorithm"] as? String == "ES256"
                }?[
                    "kid"] as? String)
            server.clock.advance(by: 1)  // events of one millisecond are ordered by id, not by time
            let rotated = try await client.json(.post, "/admin/v1/keys/rotate", bearer: admin)
            let newKids = Set(rotated.object["kids"] as? [String] ?? [])
            #expect(
                !newKids.contains(oldKid)
                    && newKids == Set([server.server.keys.currentKID(.es256), server.server.keys.currentKID(.rs256)].compactMap { $0 }))
            let jwks = try await client.json(.get, "/.well-known/jwks.json")
            let kids = (jwks.object["keys"] as? [[String: Any]])?.compactMap { $0["kid"] as? String } ?? []
            #expect(newKids.isSubset(of: kids) && kids.contains(oldKid) && kids.count == 4)
            #expect(try await client.json(.post, "/admin/v1/keys/nope/revoke", bearer: admin).status == .notFound)
            server.clock.advance(by: 1)  // events of one millisecond are ordered by id, not by time
            #expect(try await client.json(.post, "/admin/v1/keys/\(oldKid)/revoke", bearer: admin).status == .ok)
            // The admin's own token was signed by the revoked key: it stops working too.
            #expect(try await client.json(.get, "/admin/v1/audit", bearer: admin).status == .unauthorized)
            let again = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials", "scope": "admin"], basic: ("ops", ops.secret))
            admin = try #require(again.string("access_token"))

            let audit = try await client.json(.get, "/admin/v1/audit?limit=1000", bearer: admin)
            // The test's own set-up (clients made in code, as the CLI makes them) is audited with actor `cli`.
            let admins = (audit.object["events"] as? [[String: Any]] ?? []).filter { $0["actor"] as? String == "client:ops" }
            #expect(
                admins.compactMap { $0["type"] as? String } == [
                    "admin.client.created", "admin.client.updated", "admin.client.deleted", "admin.key.rotated", "admin.key.revoked",
                ], "\(admins)")
            #expect(admins.allSatisfy { ($0["request_id"] as? String)?.isEmpty == false && $0["method"] as? String == "admin" })
            let setUp = (audit.object["events"] as? [[String: Any]] ?? []).filter { $0["actor"] as? String == "cli" }
            #expect(setUp.contains { $0["type"] as? String == "admin.client.created" && $0["client_id"] as? String == "ops" })
            // Paged by cursor: two at a time reach the same events.
            var cursor: String?
            var paged: [String] = []
            repeat {
                let page = try await client.json(.get, "/admin/v1/audit?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), bearer: admin)
                paged += (page.object["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                cursor = page.string("next_cursor")
            } while cursor != nil
            #expect(paged == (audit.object["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        }
    }
}
