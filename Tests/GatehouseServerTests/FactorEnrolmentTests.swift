import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// A client that requires a second factor (`mfa=required`): a user without one enrols an authenticator
/// app inside the sign-in, before any session starts; recovery codes come with the first session.
@Suite("Second factors: enrolment before the first session")
struct FactorEnrolmentTests {
    static let password = "correct horse battery"

    @Test(
        "MFA-4: mfa=required: sign-up answers mfa_required with enrol, no session; /v1/mfa/enrol gives the same app until its first code (pyotp) completes the sign-in with 10 recovery codes, is_new, amr otp+mfa and acr 2 in the access token; the next sign-in asks for the factor; a recovery code used is audited and mailed; bad input is 4xx",
        arguments: TestDatabase.available)
    func enrolBeforeFirstSession(_ database: TestDatabase) async throws {
        guard await SecondFactorTests.hasPyotp() else { return }
        let server = try await TestServer.startOpen(database)
        try await server.createClient(id: "strict", settings: ["email_verification=off", "mfa=required"])
        let clock = server.clock
        let email = "first@example.com"
        try await server.withRouter { client in
            let signUp = try await client.json(
                .post, "/v1/signup", ["client_id": "strict", "email": email, "password": Self.password])
            #expect(signUp.status == .forbidden && signUp.string("code") == "mfa_required", "\(signUp.text)")
            #expect(signUp.object["enrol"] as? Bool == true && signUp.object["factors"] as? [String] == ["totp"])
            #expect(signUp.string("access_token") == nil)
            let flow = try #require(signUp.string("flow_id"))
            let userID = try #require(try await server.persistence.read { try await $0.users.find(email: email) }?.id)
            #expect(try await server.persistence.read { try await $0.sessions.listLive(userID: userID, now: clock.now()) }.isEmpty)

            // Only the enrolment completes it.
            let recovery = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": flow, "factor": "recovery_code", "code": "aaaaa-bbbbb"])
            #expect(recovery.status == .unprocessableContent, "\(recovery.text)")
            let enrolled = try await client.json(.post, "/v1/mfa/enrol", ["flow_id": flow])
            #expect(enrolled.status == .created, "\(enrolled.text)")
            let secret = try #require(enrolled.string("secret"))
            #expect(
                try await client.json(.post, "/v1/mfa/enrol", ["flow_id": flow]).string("secret") == secret, "a reload must keep the app")
            for body: [String: any Sendable] in [["flow_id": "nope"], ["flow_id": UUID().uuidString], [:]] {
                let answer = try await client.json(.post, "/v1/mfa/enrol", body)
                #expect((400..<500).contains(answer.status.code), "\(body): \(answer.status) \(answer.text)")
            }
            let wrong = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "totp", "code": "000000"])
            #expect(wrong.status == .unauthorized && wrong.string("code") == "invalid_code")

            let code = try #require(try await SecondFactorTests.pyotp(secret, at: clock.now()))
            let done = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "totp", "code": code])
            #expect(done.status == .ok, "\(done.text)")
            #expect(done.object["is_new"] as? Bool == true)
            let codes = try #require(done.object["recovery_codes"] as? [String])
            #expect(codes.count == 10)
            let claims = try decodeClaims(try #require(done.string("access_token")))
            let amr = claims["amr"] as? [String] ?? []
            #expect(amr.contains("pwd") && amr.contains("otp") && amr.contains("mfa"), "\(amr)")
            #expect(claims["acr"] as? String == "2" && claims["auth_time"] as? Int == Int(clock.now().timeIntervalSince1970), "\(claims)")
            let enrolledEvents = try await server.persistence.read { try await $0.audit.list(AuditQuery(type: AuditEvent.factorEnrolled)) }
            #expect(enrolledEvents.count == 1)

            // From now on the factor is asked, not enrolled, and this flow enrols nothing.
            let next = try await client.json(.post, "/v1/login", ["client_id": "strict", "email": email, "password": Self.password])
            #expect(next.string("code") == "mfa_required" && next.object["enrol"] == nil, "\(next.text)")
            #expect(next.object["factors"] as? [String] == ["totp", "recovery_code"])
            let nextFlow = try #require(next.string("flow_id"))
            #expect(try await client.json(.post, "/v1/mfa/enrol", ["flow_id": nextFlow]).status == .unprocessableContent)
            let recovered = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": nextFlow, "factor": "recovery_code", "code": codes[3]])
            #expect(recovered.status == .ok && recovered.object["recovery_codes"] == nil, "\(recovered.text)")
            let used = try await server.persistence.read { try await $0.audit.list(AuditQuery(type: AuditEvent.recoveryCodeUsed)) }
            #expect(used.count == 1)
            try await server.deliverMail()
            let notice = try #require(server.lastMail(to: email, kind: "recovery_code_used"))
            #expect(notice.text.contains("9 left") && !codes.contains { notice.text.contains($0) }, "\(notice.text)")
            // A client without the requirement asks the enrolled factor all the same.
            let open = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": email, "password": Self.password])
            #expect(open.string("code") == "mfa_required", "\(open.text)")
        }
        await server.stop()
    }
}

/// Operators and a user's second factors: listed without a secret, reset when the app and codes are lost.
@Suite("Second factors: operators")
struct FactorOperatorTests {
    @Test(
        "MFA-6: the admin API lists a user's factors (no secret) and resets them (sessions end, audited, webhook mfa.removed); enrol and recovery-code use are webhooks too; the console shows the factors without the codes' hashes and resets them only from a session signed in within 15 minutes, with the box ticked"
    )
    func operators() async throws {
        guard await SecondFactorTests.hasPyotp() else { return }
        let hooks = FlowHooks(webhooks: WebhookOutbox(subscriptions: [WebhookSubscription(url: "https://hooks.example.com/in")]))
        let server = try await TestServer.startOpen(.sqlite, hooks: hooks)
        let clock = server.clock
        try await server.withRouter { client in
            let user = try await signUp(client, email: "lost@example.com")
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let enrolled = try await client.json(.post, "/v1/me/factors/totp", bearer: user.accessToken)
            let secret = try #require(enrolled.string("secret"))
            let code = try #require(try await SecondFactorTests.pyotp(secret, at: clock.now()))
            let confirmed = try await client.json(
                .post, "/v1/me/factors/\(try #require(enrolled.string("id")))/confirm", ["code": code], bearer: user.accessToken)
            let codes = try #require(confirmed.object["recovery_codes"] as? [String])
            let login = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            let signedIn = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": try #require(login.string("flow_id")), "factor": "recovery_code", "code": codes[0]])
            #expect(signedIn.status == .ok)
            let signedInToken = try #require(signedIn.string("access_token"))

            var admin = try await adminToken(server, client, id: "ops", scopes: [AdminScope.users])
            let listed = try await client.json(.get, "/admin/v1/users/\(userID)/factors", bearer: admin)
            #expect(listed.status == .ok && listed.object["recovery_codes_left"] as? Int == 9, "\(listed.text)")
            #expect(!listed.text.contains(secret) && !listed.text.contains("sealed"))

            // The console: factors shown, recovery codes counted, never listed by their hashes.
            let access = ConsoleAccess(persistence: server.persistence, clock: clock)
            let entered = try await access.enter(linkToken: try await access.issueLink(operatorName: "grace"), meta: RequestMeta())
            let cookie = "gh_console=\(entered.token)"
            let page = try await client.executeRequest(
                uri: "/admin/console/users/\(userID)", method: .get, headers: [.cookie: cookie], body: nil)
            #expect(page.status == .ok && page.text.contains("Recovery codes left: 9"), "\(page.text)")
            let hashes = try await server.persistence.read {
                try await $0.credentials.list(userID: UUID(uuidString: userID)!, type: .recoveryCode).flatMap(\.identifiers)
            }
            #expect(hashes.count == 9 && !hashes.contains { page.text.contains($0) }, "the console lists recovery codes' hashes")
            let csrf = try #require(
                page.text.range(of: #"name="csrf" value=""#).map { String(page.text[$0.upperBound...].prefix { $0 != "\"" }) })
            func reset(_ fields: String) async throws -> TestResponse {
                try await client.executeRequest(
                    uri: "/admin/console/users/\(userID)/reset-factors", method: .post,
                    headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: fields))
            }
            #expect(try await reset("csrf=\(csrf)").status == .badRequest, "the box must be ticked")
            clock.advance(by: FactorsFlow.recentSignIn + 1)
            #expect(try await reset("csrf=\(csrf)&confirm=yes").status == .forbidden, "an old console session resets nothing")
            #expect(
                try await server.persistence.read { try await $0.credentials.count(userID: UUID(uuidString: userID)!, type: .totp) } == 1)

            // The API resets: factors and sessions gone; the password alone signs in again.
            admin = try await adminToken(server, client, id: "ops-2", scopes: [AdminScope.users])
            let reset = try await client.json(.post, "/admin/v1/users/\(userID)/factors/reset", bearer: admin)
            #expect(reset.status == .ok && reset.object["removed_factors"] as? Int == 1, "\(reset.text)")
            #expect(try await client.json(.get, "/v1/me", bearer: signedInToken).status == .unauthorized)
            #expect(
                try await client.json(.get, "/admin/v1/users/\(userID)/factors", bearer: admin).object["recovery_codes_left"] as? Int == 0)
            _ = try await logIn(client, email: user.email, password: user.password)
            #expect(try await client.json(.post, "/admin/v1/users/\(UUID())/factors/reset", bearer: admin).status == .notFound)

            let audit = try await server.persistence.read {
                try await $0.audit.list(AuditQuery(userID: UUID(uuidString: userID)!, limit: 100))
            }
            #expect(
                audit.contains { $0.type == AuditEvent.admin("mfa.reset") && ($0.actor ?? "").contains("ops-2") }, "\(audit.map(\.type))")
            let webhooks = try await server.persistence.read { try await $0.outbox.list(status: nil, channel: .webhook, limit: 100) }
            let kinds = Set(webhooks.map(\.kind))
            #expect(
                kinds.isSuperset(of: [AuditEvent.factorEnrolled, AuditEvent.recoveryCodeUsed, AuditEvent.factorRemoved]), "\(kinds)")
        }
    }
}
