import Foundation
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Log hygiene")
struct LogHygieneTests {
    @Test("No password, token, code or client secret reaches the log, even at trace level", arguments: TestDatabase.available)
    func secretsStayOutOfLogs(database: TestDatabase) async throws {
        let logs = CapturedLogs()
        let server = try await TestServer.startOpen(database, logs: logs)
        let backend = try await server.createClient(id: "backend", kind: .confidential)
        let clientSecret = try #require(backend.secret)
        try await server.withRouter { client in
            var secrets: [String] = [clientSecret]
            let user = try await signUp(client, password: "hunter2 but longer")
            _ = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": "a wrong password"])
            let again = try await logIn(client, email: user.email, password: user.password)
            let rotated = try await refresh(client, again.refreshToken)
            _ = try await client.form("/oauth/introspect", ["token": again.accessToken], basic: ("backend", clientSecret))
            _ = try await client.json(
                .put, "/v1/me/password", ["password": "the next secret", "current_password": "not the current one"],
                bearer: again.accessToken)
            _ = try await client.json(.post, "/v1/signup", ["email": "pending@example.com", "password": "pending password"])
            _ = try await client.json(.post, "/v1/logout", bearer: user.accessToken)
            secrets += [
                user.password, "a wrong password", "the next secret", "not the current one", "pending password",
                user.accessToken, user.refreshToken, again.accessToken, again.refreshToken,
                rotated.string("refresh_token") ?? "", rotated.string("access_token") ?? "",
            ]
            // The verification code sits sealed in the outbox; it must not be in the log either.
            let sealed = try await server.persistence.read { try await $0.outbox.list(status: .pending, limit: 10) }
            for message in sealed where message.kind == "verification" {
                let payload = try JSONDecoder().decode([String: String].self, from: try server.services.secret.open(message.sealedPayload))
                secrets.append(try #require(payload["code"]))
            }
            let lines = logs.all
            #expect(!lines.isEmpty, "the trace logger captured nothing, so this test would prove nothing")
            // A failed sign-in is visible at the default level (info), without the address.
            let failed = lines.filter { $0.hasPrefix("info sign-in failed") }
            #expect(failed.count == 1, "\(lines.filter { $0.contains("sign-in") })")
            #expect(failed.allSatisfy { $0.contains("method=password") && !$0.contains(user.email) })
            for secret in secrets where !secret.isEmpty {
                let leaks = lines.filter { $0.contains(secret) }
                #expect(leaks.isEmpty, "\(secret.prefix(12))… appears in: \(leaks.prefix(2))")
            }
        }
    }

    @Test(
        "MFA-11: no TOTP secret, authenticator-app code, recovery code or mailed second-factor code reaches the log, even at trace level: enrolment, confirmation, wrong and right answers, a recovery code, enrolment inside a sign-in and a code by mail"
    )
    func secondFactorsStayOutOfLogs() async throws {
        guard await SecondFactorTests.hasPyotp() else { return }
        let logs = CapturedLogs()
        let server = try await TestServer.startOpen(.sqlite, logs: logs)
        try await server.createClient(id: "strict", settings: ["email_verification=off", "mfa=required"])
        _ = try await UserAdmin(services: server.services).create(
            UserDraft(email: "mailbox@example.com", password: "a letterbox secret", emailVerified: true), actor: AdminActor(name: "test"))
        let clock = server.clock
        try await server.withRouter { client in
            var secrets: [String] = []
            let user = try await signUp(client, email: "quiet@example.com")
            let enrolled = try await client.json(.post, "/v1/me/factors/totp", bearer: user.accessToken)
            let secret = try #require(enrolled.string("secret"))
            let first = try #require(try await SecondFactorTests.pyotp(secret, at: clock.now()))
            _ = try await client.json(
                .post, "/v1/me/factors/\(try #require(enrolled.string("id")))/confirm", ["code": "999999"], bearer: user.accessToken)
            let confirmed = try await client.json(
                .post, "/v1/me/factors/\(try #require(enrolled.string("id")))/confirm", ["code": first], bearer: user.accessToken)
            let codes = try #require(confirmed.object["recovery_codes"] as? [String])
            let login = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            let flow = try #require(login.string("flow_id"))
            _ = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "totp", "code": "123987"])
            _ = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "recovery_code", "code": codes[0]])
            // Enrolment inside a sign-in, and a code by mail.
            let strict = try await client.json(
                .post, "/v1/signup", ["client_id": "strict", "email": "new@example.com", "password": "a careful passphrase"])
            let pending = try #require(strict.string("flow_id"))
            let inFlow = try await client.json(.post, "/v1/mfa/enrol", ["flow_id": pending])
            let inFlowSecret = try #require(inFlow.string("secret"))
            let inFlowCode = try #require(try await SecondFactorTests.pyotp(inFlowSecret, at: clock.now()))
            _ = try await client.json(.post, "/v1/mfa/verify", ["flow_id": pending, "factor": "totp", "code": inFlowCode])
            let mailLogin = try await client.json(
                .post, "/v1/login", ["client_id": "strict", "email": "mailbox@example.com", "password": "a letterbox secret"])
            let mailFlow = try #require(mailLogin.string("flow_id"))
            _ = try await client.json(.post, "/v1/mfa/send", ["flow_id": mailFlow, "factor": "email_otp"])
            try await server.deliverMail()
            let mailed = try #require(server.lastMail(to: "mailbox@example.com", kind: "otp")?.text.firstMatch(of: /\b\d{6}\b/))
            _ = try await client.json(.post, "/v1/mfa/verify", ["flow_id": mailFlow, "factor": "email_otp", "code": String(mailed.output)])
            secrets += [secret, first, inFlowSecret, inFlowCode, String(mailed.output), "999999", "123987"] + codes

            let lines = logs.all
            #expect(!lines.isEmpty, "the trace logger captured nothing, so this test would prove nothing")
            for value in secrets {
                // A whole token: a six-digit code is not "in" a longer number (a duration, a port).
                let leaks = lines.filter { $0.range(of: "(?<![0-9A-Za-z])\(value)(?![0-9A-Za-z])", options: .regularExpression) != nil }
                #expect(leaks.isEmpty, "\(value.prefix(4))… appears in: \(leaks.prefix(2))")
            }
        }
    }
}
