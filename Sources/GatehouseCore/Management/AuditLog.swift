import Foundation

/// Reading the audit log, shared by `gatehouse audit` and the admin API.
public struct AuditLog: Sendable {
    let persistence: any Persistence

    public init(persistence: any Persistence) { self.persistence = persistence }

    public func list(_ query: AuditQuery) async throws -> [AuditEvent] {
        try await persistence.read { try await $0.audit.list(query) }
    }

    /// One event as a JSON Lines record.
    public static func jsonLine(_ event: AuditEvent) -> String {
        var record: [String: String] = [
            "id": event.id.uuidString.lowercased(), "type": event.type,
            "at": event.at.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)),
        ]
        record["user_id"] = event.userID?.uuidString.lowercased()
        record["client_id"] = event.clientID
        record["method"] = event.method
        record["reason"] = event.reason
        record["account"] = event.account
        record["address_block"] = event.addressBlock
        record["user_agent"] = event.userAgent
        record["actor"] = event.actor
        record["request_id"] = event.requestID
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
