import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Key actions and the console's security actions: recorded with the change or not made at all, and
/// only from a recent console sign-in.
@Suite("Admin key actions")
struct AdminKeyAuditTests {
    /// A trigger that fails every audit insert stands for a crash between the key change and its
    /// audit event: the change must be rolled back with it.
    static let failAudit = [
        """
        CREATE TRIGGER injected_audit_crash BEFORE INSERT ON audit_events
        BEGIN SELECT RAISE(ABORT, 'injected crash before the audit event'); END
        """
    ]
    static let healAudit = ["DROP TRIGGER injected_audit_crash"]

    @Test("AD-12: a key rotation or revocation and its audit event are one transaction: a crash between leaves neither")
    func auditedInTransaction() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let keys = server.server.keys
        let admin = KeyAdmin(keys: keys, clock: server.clock)
        let before = try await keys.published().map(\.kid)
        let es256 = try #require(keys.currentKID(.es256))

        try await server.server.persistence.executeRaw(Self.failAudit)
        await #expect(throws: (any Error).self) { try await admin.rotate(actor: .commandLine) }
        #expect(try await keys.published().map(\.kid) == before, "a rotation without its audit event was kept")
        #expect(keys.currentKID(.es256) == es256)
        // Revoking the current key replaces it first; that replacement is undone with the revocation.
        await #expect(throws: (any Error).self) { try await admin.revoke(kid: es256, actor: .commandLine) }
        #expect(try await keys.published().map(\.kid) == before, "a revocation without its audit event was kept")
        #expect(
            try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 100)).filter { $0.type.hasPrefix("admin.key") }
                .isEmpty)

        try await server.server.persistence.executeRaw(Self.healAudit)
        let kids = try await admin.rotate(actor: .commandLine)
        server.clock.advance(by: 1)
        #expect(try await admin.revoke(kid: es256, actor: .commandLine) == false, "no longer current after the rotation")
        let events = try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 100)).filter {
            $0.type.hasPrefix("admin.key")
        }
        #expect(events.map(\.type) == ["admin.key.rotated", "admin.key.revoked"])
        #expect(events.first?.reason == "kid " + kids.joined(separator: ", ") && events.last?.reason == "kid " + es256)
        // An unknown kid changes nothing and records nothing.
        await #expect(throws: SigningKeysError.self) { try await admin.revoke(kid: "no-such-kid", actor: .commandLine) }
        #expect(
            try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 100)).filter { $0.type.hasPrefix("admin.key") }.count
                == 2)
        await server.stop()
    }

    @Test("AD-13: deleting a user and rotating keys in the console need a sign-in from the last 15 minutes")
    func consoleFreshSignIn() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client, email: "fresh@example.com")
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let access = ConsoleAccess(persistence: server.persistence, clock: server.clock)
            let entered = try await access.enter(linkToken: try await access.issueLink(operatorName: "grace"), meta: RequestMeta())
            let cookie = "gh_console=\(entered.token)"
            let page = try await client.executeRequest(uri: "/admin/console/keys", method: .get, headers: [.cookie: cookie], body: nil)
            let csrf = try #require(
                page.text.range(of: #"name="csrf" value=""#).map { String(page.text[$0.upperBound...].prefix { $0 != "\"" }) })
            func post(_ path: String, _ fields: String) async throws -> TestResponse {
                try await client.executeRequest(
                    uri: path, method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: fields))
            }
            let kid = server.server.keys.currentKID(.es256)

            server.clock.advance(by: FactorsFlow.recentSignIn + 1)
            let oldDelete = try await post("/admin/console/users/\(userID)/delete", "csrf=\(csrf)&confirm=yes")
            #expect(oldDelete.status == .forbidden && oldDelete.text.contains("15 minutes"), "\(oldDelete.text)")
            #expect(try await server.persistence.read { try await $0.users.find(id: UUID(uuidString: userID)!) } != nil)
            #expect(try await post("/admin/console/keys/rotate", "csrf=\(csrf)").status == .forbidden)
            #expect(server.server.keys.currentKID(.es256) == kid)
            // Looking is still allowed from the older session.
            #expect(
                try await client.executeRequest(uri: "/admin/console/users/\(userID)", method: .get, headers: [.cookie: cookie], body: nil)
                    .status == .ok)

            let fresh = try await access.enter(linkToken: try await access.issueLink(operatorName: "grace"), meta: RequestMeta())
            let freshCookie = "gh_console=\(fresh.token)"
            let freshPage = try await client.executeRequest(
                uri: "/admin/console/keys", method: .get, headers: [.cookie: freshCookie], body: nil)
            let freshCSRF = try #require(
                freshPage.text.range(of: #"name="csrf" value=""#).map { String(freshPage.text[$0.upperBound...].prefix { $0 != "\"" }) })
            let rotated = try await client.executeRequest(
                uri: "/admin/console/keys/rotate", method: .post,
                headers: [.cookie: freshCookie, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "csrf=\(freshCSRF)"))
            #expect(rotated.status == .seeOther)
            #expect(server.server.keys.currentKID(.es256) != kid)
            let deleted = try await client.executeRequest(
                uri: "/admin/console/users/\(userID)/delete", method: .post,
                headers: [.cookie: freshCookie, .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "csrf=\(freshCSRF)&confirm=yes"))
            #expect(deleted.status == .seeOther)
            #expect(try await server.persistence.read { try await $0.users.find(id: UUID(uuidString: userID)!) } == nil)
        }
    }
}
