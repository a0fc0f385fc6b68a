import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// The CLI's user commands, run as the operator runs them (the built binary, on the server's database).
@Suite("Admin CLI")
struct AdminCLITests {
    @Test("AD-7: the CLI's user commands call the same core code: list, show, export, disable, sign-out and delete, audited with actor cli")
    func commandLine() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let url = server.server.configuration.databaseURL
        // As the service runs it: the same database and the same secret (a CLI holding another secret
        // is refused rather than sealing logout notices the server could not open).
        let store = ["--database-url", url, "--secret-file", server.server.configuration.secretFile]
        try await server.withRouter { client in
            let user = try await signUp(client, email: "cli-user@example.com")
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let binary = Subprocess.builtProduct("gatehouse")
            let list = try await Subprocess.run(binary, ["users", "list", "--email", "cli-"] + store)
            #expect(list.status == 0 && list.output.contains(userID), "\(list.output)")
            let export = try await Subprocess.run(binary, ["users", "export", userID] + store)
            #expect(
                export.status == 0 && export.output.contains("cli-user@example.com") && !export.output.contains("$argon2"),
                "\(export.output)")
            let disable = try await Subprocess.run(binary, ["users", "disable", userID] + store)
            #expect(disable.status == 0 && disable.output.contains("disabled"))
            #expect(try await refresh(client, user.refreshToken).status == .badRequest)
            let refusal = try await Subprocess.run(binary, ["users", "delete", userID] + store)
            #expect(refusal.status != 0 && refusal.output.contains("--yes"))
            let delete = try await Subprocess.run(binary, ["users", "delete", userID, "--yes"] + store)
            #expect(delete.status == 0, "\(delete.output)")
            let gone = try await Subprocess.run(binary, ["users", "show", userID] + store)
            #expect(gone.status != 0 && gone.output.contains("No user"), "\(gone.output)")
            let events = try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 100)).filter {
                $0.actor == "cli" && $0.userID != nil
            }
            #expect(events.map(\.type) == ["admin.user.exported", "admin.user.disabled", "admin.user.deleted"])
        }
    }
}
