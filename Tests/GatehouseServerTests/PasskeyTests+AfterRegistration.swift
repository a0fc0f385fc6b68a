import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Passkeys after they are registered: managed by their owner, used as the second factor, seen by an
/// operator.
extension PasskeyTests {
    @Test(
        "PK-5: the owner renames a passkey and removes it, which ends the sessions it started (another user cannot touch it: 404); the last way to sign in cannot be removed (409 last_sign_in_method); registering needs a sign-in of the last 15 minutes; the Apple app-site association names the configured apps under webcredentials and the asset links the Android app's get_login_creds with its fingerprint"
    )
    func manage() async throws {
        guard await Self.available() else { return }
        let server = try await Self.start(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: Self.client)
            let other = try await signUp(client, clientID: Self.client)
            let subject = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let userID = try #require(UUID(uuidString: subject))
            let registered = try await Self.register(client, bearer: user.accessToken)
            let renamed = try await client.json(
                .patch, "/v1/me/passkeys/\(registered.id)", ["name": "Work phone"], bearer: user.accessToken)
            #expect(renamed.status == .ok && renamed.string("name") == "Work phone", "\(renamed.text)")
            let blank = try await client.json(.patch, "/v1/me/passkeys/\(registered.id)", ["name": " \u{7}"], bearer: user.accessToken)
            #expect(blank.status == .unprocessableContent, "\(blank.text)")
            let foreign = try await client.json(.patch, "/v1/me/passkeys/\(registered.id)", ["name": "Mine"], bearer: other.accessToken)
            #expect(foreign.status == .notFound)
            let foreignDelete = try await client.json(.delete, "/v1/me/passkeys/\(registered.id)", bearer: other.accessToken)
            #expect(foreignDelete.status == .notFound)

            // A session the passkey started ends with it; the password's session stays.
            let signedIn = try await Self.signIn(client, registered, signCount: 1)
            let passkeySession = try #require(signedIn.string("access_token"))
            #expect(try await client.json(.get, "/v1/me", bearer: passkeySession).status == .ok)
            let removed = try await client.json(.delete, "/v1/me/passkeys/\(registered.id)", bearer: user.accessToken)
            #expect(removed.status == .noContent, "\(removed.text)")
            #expect(try await client.json(.get, "/v1/me", bearer: passkeySession).status == .unauthorized)
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .ok)
            let gone = try await Self.signIn(client, registered, signCount: 2)
            #expect(gone.status == .unauthorized && gone.string("code") == "invalid_credentials")
            let removals = try await server.persistence.read {
                try await $0.audit.list(AuditQuery(userID: userID, type: AuditEvent.factorRemoved))
            }
            #expect(removals.map(\.method) == ["passkey"])

            // The only way in left: the passkey, once the password is gone.
            let last = try await Self.register(client, bearer: user.accessToken)
            try await server.persistence.transaction { stores in
                _ = try await stores.credentials.deleteAll(userID: userID, type: .password)
            }
            let refused = try await client.json(.delete, "/v1/me/passkeys/\(last.id)", bearer: user.accessToken)
            #expect(refused.status == .conflict && refused.string("code") == "last_sign_in_method", "\(refused.text)")

            // Sixteen minutes later the session is too old to add a way in.
            // (The access token has expired by then: a refresh gives a fresh one of the same old session.)
            server.clock.advance(by: 16 * 60)
            let refreshed = try await client.form(
                "/oauth/token", ["grant_type": "refresh_token", "refresh_token": user.refreshToken, "client_id": Self.client])
            let fresh = try #require(refreshed.string("access_token"), "\(refreshed.text)")
            let stale = try await client.json(.post, "/v1/passkeys/registration/options", [:], bearer: fresh)
            #expect(stale.status.code / 100 == 4 && stale.string("code") == "reauthentication_required", "\(stale.text)")

            let apple = try await client.json(.get, "/.well-known/apple-app-site-association")
            #expect(apple.status == .ok && apple.headers[.contentType] == "application/json")
            #expect((apple.object["webcredentials"] as? [String: Any])?["apps"] as? [String] == ["ABCDE12345.com.example.app"])
            let android = try await client.json(.get, "/.well-known/assetlinks.json")
            let statements = try #require(try JSONSerialization.jsonObject(with: Data(android.text.utf8)) as? [[String: Any]])
            let target = statements.first?["target"] as? [String: Any]
            #expect(target?["package_name"] as? String == "com.example.app")
            #expect(target?["sha256_cert_fingerprints"] as? [String] == [String(repeating: "AB:", count: 31) + "AB"])
            #expect((statements.first?["relation"] as? [String])?.contains("delegate_permission/common.get_login_creds") == true)
        }
    }

    @Test(
        "PK-6: a passkey as the required second factor: on a client with mfa=required a password sign-in of a user with a passkey answers mfa_required offering passkey (no enrolment); the options name the user's passkey and the waiting sign-in's own challenge; the assertion (no user verification needed) completes it with amr pwd, hwk and mfa and starts exactly one session; an assertion over another waiting sign-in's challenge and a replay are refused",
        arguments: TestDatabase.available)
    func secondFactor(_ database: TestDatabase) async throws {
        guard await Self.available() else { return }
        let server = try await Self.start(database)
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: Self.client)
            let subject = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let userID = try #require(UUID(uuidString: subject))
            let registered = try await Self.register(client, bearer: user.accessToken)
            func sessions() async throws -> Int {
                try await server.persistence.read { try await $0.sessions.listLive(userID: userID, now: server.clock.now()) }.count
            }
            func waiting() async throws -> String {
                let login = try await client.json(
                    .post, "/v1/login", ["client_id": "strict-app", "email": user.email, "password": user.password])
                #expect(login.status == .forbidden && login.string("code") == "mfa_required", "\(login.text)")
                #expect(login.object["factors"] as? [String] == ["passkey"], "\(login.text)")
                #expect(login.object["enrol"] as? Bool != true)
                return login.string("flow_id") ?? ""
            }
            func answer(flow: String, challengeOf other: String? = nil, signCount: UInt32) async throws -> [String: any Sendable] {
                let options = try await client.json(.post, "/v1/mfa/passkey/options", ["flow_id": other ?? flow])
                #expect(options.status == .ok, "\(options.text)")
                let publicKey = options.object["public_key"] as? [String: Any] ?? [:]
                let allowed = (publicKey["allowCredentials"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                #expect(allowed == [registered.credential.credentialID])
                #expect(publicKey["userVerification"] as? String == "discouraged")
                var spec = IndependentAuthenticator.Spec.get(
                    rpID: Self.rpID, origin: Self.origin, challenge: publicKey["challenge"] as? String ?? "",
                    credential: registered.credential, signCount: signCount)
                spec.uv = false
                let assertion = try await IndependentAuthenticator.get([spec])[0]
                let body = Self.assertionBody(assertion, credentialID: registered.credential.credentialID, flow: flow)
                return ["flow_id": flow, "factor": "passkey", "credential": body["credential"]!]
            }
            let before = try await sessions()
            let flow = try await waiting()
            let other = try await waiting()
            // Another waiting sign-in's challenge does not answer this one.
            let foreign = try await client.json(.post, "/v1/mfa/verify", try await answer(flow: flow, challengeOf: other, signCount: 1))
            #expect(foreign.status == .unauthorized && foreign.string("code") == "invalid_code", "\(foreign.text)")
            let right = try await answer(flow: flow, signCount: 2)
            let completed = try await client.json(.post, "/v1/mfa/verify", right)
            #expect(completed.status == .ok, "\(completed.text)")
            let claims = try decodeClaims(try #require(completed.string("access_token")))
            #expect(Set(claims["amr"] as? [String] ?? []) == ["pwd", "hwk", "mfa"], "\(claims)")
            #expect(try await sessions() == before + 1)
            let replayed = try await client.json(.post, "/v1/mfa/verify", right)
            #expect(replayed.status.code / 100 == 4 && replayed.string("access_token") == nil, "\(replayed.text)")
            #expect(try await sessions() == before + 1)
            // Without a credential the passkey factor is a field error, never a crash.
            let empty = try await client.json(.post, "/v1/mfa/verify", ["flow_id": other, "factor": "passkey", "code": ""])
            #expect(empty.status == .unprocessableContent, "\(empty.text)")
        }
    }

    @Test(
        "PK-7: passkeys are listed like other factors, by name, to the user (/v1/me/factors) and the operator (admin API, export); the user removes one through /v1/me/factors too; the operator removes one through the admin API (audited admin.passkey.removed, its sessions ended), and a user's last way in is not removed"
    )
    func operatorView() async throws {
        guard await Self.available() else { return }
        let server = try await Self.start(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: Self.client)
            let subject = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let userID = try #require(UUID(uuidString: subject))
            let first = try await Self.register(client, bearer: user.accessToken)
            let second = try await Self.register(client, bearer: user.accessToken)
            let admin = try await adminToken(server, client, id: "operator", scopes: [AdminScope.users])

            let mine = try await client.json(.get, "/v1/me/factors", bearer: user.accessToken)
            let listed = (mine.object["factors"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "passkey" }
            #expect(Set(listed.compactMap { $0["id"] as? String }) == [first.id, second.id], "\(mine.text)")
            #expect(listed.allSatisfy { $0["name"] as? String == "Laptop" && $0["confirmed"] as? Bool == true })
            let operatorList = try await client.json(.get, "/admin/v1/users/\(subject)/factors", bearer: admin)
            #expect((operatorList.object["factors"] as? [[String: Any]] ?? []).count == 2, "\(operatorList.text)")
            let export = try await client.json(.get, "/admin/v1/users/\(subject)/export", bearer: admin)
            #expect(export.text.contains("\"passkey\""), "the export leaves passkeys out")

            // The user removes the first through the factors route.
            let removed = try await client.json(.delete, "/v1/me/factors/\(first.id)", bearer: user.accessToken)
            #expect(removed.status == .noContent, "\(removed.text)")
            // The operator removes the second; its session ends.
            let signedIn = try await Self.signIn(client, second, signCount: 1)
            let passkeySession = try #require(signedIn.string("access_token"))
            let byOperator = try await client.json(.delete, "/admin/v1/users/\(subject)/passkeys/\(second.id)", bearer: admin)
            #expect(byOperator.status == .noContent, "\(byOperator.text)")
            #expect(try await client.json(.get, "/v1/me", bearer: passkeySession).status == .unauthorized)
            let audited = try await server.persistence.read {
                try await $0.audit.list(AuditQuery(userID: userID, type: AuditEvent.admin("passkey.removed")))
            }
            #expect(audited.count == 1)
            let missing = try await client.json(.delete, "/admin/v1/users/\(subject)/passkeys/\(second.id)", bearer: admin)
            #expect(missing.status == .notFound)

            // The last way in stays.
            let last = try await Self.register(client, bearer: user.accessToken)
            try await server.persistence.transaction { _ = try await $0.credentials.deleteAll(userID: userID, type: .password) }
            let refused = try await client.json(.delete, "/admin/v1/users/\(subject)/passkeys/\(last.id)", bearer: admin)
            #expect(refused.status == .conflict && refused.string("code") == "last_sign_in_method", "\(refused.text)")
        }
    }
}
