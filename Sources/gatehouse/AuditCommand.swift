import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Print security events from the audit log as JSON Lines, oldest first; --follow keeps printing new ones.",
        discussion: """
            Types: user.created, user.signed_in, user.verified, user.recovered, user.updated, password.changed, \
            session.revoked, authenticator.registered, authenticator.deregistered, code.sent, code.failed, sign_in.failed, sign_in.throttled, \
            refresh_token.reused, refresh_token.dpop_mismatch. \
            Events are kept for GATEHOUSE_AUDIT_RETENTION_DAYS (default 90).
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: "Only this user's events (id)") var user: String?
    @Option(help: "Only failed sign-ins naming this email or phone (matched by its hash, as stored)") var identifier: String?
    @Option(help: "Only this event type") var type: String?
    @Option(help: "Only this client's events") var client: String?
    @Option(help: "Only events since: an ISO 8601 time, or an age such as 30m, 12h, 7d") var since: String?
    @Option(help: "At most this many events (without --follow)") var limit = 1000
    @Flag(help: "Keep printing new events as they are written, like tail -f") var follow = false

    func run() async throws {
        var query = AuditQuery(limit: max(1, min(limit, 10_000)))
        if let user {
            guard let id = UUID(uuidString: user) else { throw ValidationError("\(user) is not a user id") }
            query.userID = id
        }
        if let identifier {
            let trimmed = identifier.trimmingCharacters(in: .whitespaces)
            // Stored the way sign-ins name it: an email lowercased, a phone in E.164.
            let normalized =
                (try? Identifier.parse(email: trimmed.contains("@") ? trimmed : nil, phone: trimmed.contains("@") ? nil : trimmed))?.value
                ?? trimmed.lowercased()
            query.account = AuditEvent.account(of: normalized)
        }
        query.type = type
        query.clientID = client
        if let since { query.since = try Self.parse(since: since) }
        let persistence = try await store.open(logger: cliLogger())
        let log = AuditLog(persistence: persistence)
        do {
            repeat {
                let events = try await log.list(query)
                // Straight to the file descriptor: `print` may hold lines in a buffer while following.
                if !events.isEmpty {
                    FileHandle.standardOutput.write(Data(events.map { AuditLog.jsonLine($0) + "\n" }.joined().utf8))
                }
                if let last = events.last { query.after = (last.at, last.id) }
                if follow, events.count < query.limit { try await Task.sleep(for: .seconds(1)) }
            } while follow
        } catch {
            await persistence.shutdown()
            throw error
        }
        await persistence.shutdown()
    }

    static func parse(since text: String) throws -> Date {
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let units: [Character: TimeInterval] = ["m": 60, "h": 3600, "d": 86400]
        guard let unit = text.last, let seconds = units[unit], let count = Double(text.dropLast()), count >= 0 else {
            throw ValidationError("--since takes an ISO 8601 time or an age such as 30m, 12h, 7d")
        }
        return Date().addingTimeInterval(-count * seconds)
    }
}
