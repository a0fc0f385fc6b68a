import Foundation

/// What may be forgotten: rows nothing reads any more.
/// The append-only audit log.
public protocol AuditStore: Sendable {
    func append(_ event: AuditEvent) async throws
    /// Oldest first, at most `query.limit`.
    func list(_ query: AuditQuery) async throws -> [AuditEvent]
}
