import Foundation

/// Operators' console links and sessions.
public protocol ConsoleSessionStore: Sendable {
    func insert(_ record: ConsoleSessionRecord) async throws
    /// Ends a live record of `kind` with this hash and returns it: one statement, so a link opens one
    /// session however many browsers race for it.
    func consume(tokenHash: String, kind: ConsoleSessionRecord.Kind, at: Date) async throws -> ConsoleSessionRecord?
    /// A live session by its token's hash.
    func findLive(tokenHash: String, at: Date) async throws -> ConsoleSessionRecord?
}
