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
}
