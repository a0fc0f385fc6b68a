import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@Suite("Audit log")
struct AuditTests {
    @Test(
        "AL-1: sign-up, sign-in, failed and throttled sign-ins, refresh-token reuse, password change and logout are in the audit log with client, method and address block, no secret; filters and the after-cursor read every event once",
        arguments: TestDatabase.available)
    func events(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database) { $0.maxFailuresPerAccount = 2 }
        let secrets = Mutex<[String]>([])
        let email = "audit-\(UUID().uuidString.prefix(6).lowercased())@example.com"
        let stranger = "nobody@example.com"
        try await server.withRouter { client in
            // A second between steps: events of one millisecond have no order among themselves.
            let user = try await signUp(client, email: email)
            server.clock.advance(by: 1)
            let login = try await logIn(client, email: email, password: user.password)
            secrets.withLock { $0 += [user.password, user.accessToken, user.refreshToken, login.accessToken, login.refreshToken] }
            for _ in 0..<3 {
                server.clock.advance(by: 1)
                _ = try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": stranger, "password": "guess number one"])
            }
            let first = try await refresh(client, user.refreshToken)
            secrets.withLock { $0 += [first.string("refresh_token") ?? "", first.string("access_token") ?? ""] }
            server.clock.advance(by: 11)
            #expect(try await refresh(client, user.refreshToken).status == .badRequest)
            server.clock.advance(by: 1)
            #expect(
                try await client.json(
                    .put, "/v1/me/password", ["current_password": user.password, "password": "a new long secret"], bearer: login.accessToken
                ).status == .noContent)
            server.clock.advance(by: 1)
            #expect(try await client.json(.post, "/v1/logout", ["scope": "local"], bearer: login.accessToken).status == .noContent)

            let log = AuditLog(persistence: server.persistence)
            // The set-up's clients are audited too (`admin.client.created`, AD-6): not this test's subject.
            let all = try await log.list(AuditQuery(limit: 1000)).filter { !$0.type.hasPrefix("admin.") }
            let types = all.map(\.type)
            #expect(
                types == [
                    "user.created", "user.signed_in", "sign_in.failed", "sign_in.failed", "sign_in.throttled", "refresh_token.reused",
                    "password.changed", "session.revoked",
                ])
            // Every event names the HTTP request that caused it (the answer's Request-Id).
            #expect(all.allSatisfy { ($0.requestID ?? "").count >= 16 }, "\(all.map { ($0.type, $0.requestID) })")
            #expect(Set(all.compactMap(\.requestID)).count >= all.count - 1, "one request id per request")
            let userID = try #require(all.first?.userID)
            let signedIn = try #require(all.first { $0.type == "user.signed_in" })
            #expect(signedIn.userID == userID && signedIn.clientID == TestServer.openClient && signedIn.method == "password")
            let failed = all.filter { $0.type.hasPrefix("sign_in.") }
            #expect(failed.allSatisfy { $0.userID == nil && $0.account == AuditEvent.account(of: stranger) })
            #expect(failed.map(\.reason) == ["invalid_credentials", "invalid_credentials", "rate_limited"])

            // Filters, and reading two at a time after the last one seen.
            #expect(try await log.list(AuditQuery(userID: userID)).count == 5)
            #expect(try await log.list(AuditQuery(account: AuditEvent.account(of: stranger))).count == 3)
            var paged: [AuditEvent] = []
            var query = AuditQuery(limit: 2)
            while true {
                let page = try await log.list(query)
                if page.isEmpty { break }
                paged += page
                query.after = (page.last!.at, page.last!.id)
            }
            var newest = AuditQuery(limit: 2)
            newest.newestFirst = true
            #expect(try await log.list(newest) == Array(paged.suffix(2).reversed()), "the newest two, newest first")
            #expect(
                paged.filter { !$0.type.hasPrefix("admin.") } == all && paged.count == all.count + 2,
                "every event once, the set-up's two clients included")

            let lines = all.map(AuditLog.jsonLine).joined(separator: "\n")
            #expect(!lines.contains(email) && !lines.contains(stranger))
            for secret in secrets.withLock({ $0 }) where !secret.isEmpty { #expect(!lines.contains(secret)) }
        }
    }

    @Test(
        "AL-4: one-time codes, verification and recovery mails sent are audited as code.sent by purpose and channel, naming the address by its hash only"
    )
    func codesSent() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.createClient(id: "codes", settings: ["methods=password,email_otp"])
        try await server.withRouter { client in
            #expect(
                try await client.json(
                    .post, "/v1/signup", ["client_id": "codes", "email": "sent@example.com", "password": "correct horse battery"]
                ).status == .created)
            server.clock.advance(by: 61)
            _ = try await client.json(.post, "/v1/otp", ["client_id": "codes", "email": "sent@example.com"])
            server.clock.advance(by: 61)
            _ = try await client.json(.post, "/v1/recovery", ["client_id": "codes", "email": "sent@example.com"])
            let sent = try await AuditLog(persistence: server.persistence).list(AuditQuery(type: AuditEvent.codeSent))
            #expect(sent.map(\.method) == ["email_verification", "email_login", "email_recovery"])
            #expect(
                sent.allSatisfy { $0.account == AuditEvent.account(of: "sent@example.com") && $0.userID != nil && $0.clientID == "codes" })
            #expect(!sent.map(AuditLog.jsonLine).joined().contains("sent@example.com"))
        }
    }

    @Test("AL-5: a wrong one-time code, verification code or recovery code is audited as code.failed with its reason, never the code")
    func codesFailed() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.createClient(id: "codes", settings: ["methods=password,email_otp"])
        try await server.withRouter { client in
            _ = try await client.json(
                .post, "/v1/signup", ["client_id": "codes", "email": "wrong@example.com", "password": "correct horse battery"])
            let guesses = [("/v1/verify", "111111"), ("/v1/otp/verify", "222222"), ("/v1/recovery/verify", "333333")]
            for (path, code) in guesses {
                server.clock.advance(by: 1)
                let answer = try await client.json(.post, path, ["client_id": "codes", "email": "wrong@example.com", "code": code])
                #expect(answer.status == .unauthorized, "\(path): \(answer.text)")
            }
            let failed = try await AuditLog(persistence: server.persistence).list(AuditQuery(type: AuditEvent.codeFailed))
            #expect(failed.map(\.method) == ["email_verification", "email_login", "email_recovery"])
            #expect(
                failed.allSatisfy {
                    ["invalid_code", "code_expired"].contains($0.reason) && $0.account == AuditEvent.account(of: "wrong@example.com")
                })
            let lines = failed.map(AuditLog.jsonLine).joined()
            #expect(!lines.contains("111111") && !lines.contains("222222") && !lines.contains("333333"))
        }
    }

    @Test("AL-2: the clean-up deletes audit events past the retention and keeps the rest")
    func retention() async throws {
        let server = try await TestServer.startOpen(.sqlite) { $0.auditRetentionDays = 30 }
        try await server.withRouter { client in
            _ = try await signUp(client)
            server.clock.advance(by: 29 * 86400)
            _ = try await Housekeeping(services: server.services).run()
            #expect(
                try await AuditLog(persistence: server.persistence).list(AuditQuery()).filter { !$0.type.hasPrefix("admin.") }.count == 1)
            server.clock.advance(by: 2 * 86400)
            _ = try await Housekeeping(services: server.services).run()
            #expect(try await AuditLog(persistence: server.persistence).list(AuditQuery()).isEmpty)
        }
    }

    @Test("AL-3: gatehouse audit prints the events as JSON Lines, filtered by type and by the identifier a failed sign-in named")
    func command() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let url = server.server.configuration.databaseURL
        try await server.withRouter { client in
            _ = try await signUp(client, email: "cli-audit@example.com")
            server.clock.advance(by: 1)
            _ = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": "Cli-Audit@Example.com", "password": "wrong guess here"])
            let binary = Subprocess.builtProduct("gatehouse")
            let all = try await Subprocess.run(binary, ["audit", "--database-url", url])
            #expect(all.status == 0, "\(all.output)")
            let records = all.output.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
            }
            #expect(records.map { $0["type"] }.filter { $0?.hasPrefix("admin.") == false } == ["user.created", "sign_in.failed"])
            #expect(
                records.contains {
                    $0["type"] == "admin.client.created" && $0["actor"] == "cli" && $0["client_id"] == TestServer.openClient
                })
            let failed = try await Subprocess.run(
                binary, ["audit", "--database-url", url, "--identifier", "CLI-AUDIT@example.com", "--type", "sign_in.failed"])
            #expect(failed.output.split(separator: "\n").count == 1 && failed.output.contains("invalid_credentials"))
            let none = try await Subprocess.run(binary, ["audit", "--database-url", url, "--identifier", "other@example.com"])
            #expect(none.status == 0 && none.output.isEmpty)
        }
    }
}
