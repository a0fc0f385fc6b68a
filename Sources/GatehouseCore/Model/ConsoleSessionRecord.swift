import Foundation

/// An operator's way into the admin console: a one-time sign-in link from `gatehouse console link`,
/// or the console session that link opened. Only the token's hash is stored.
public struct ConsoleSessionRecord: Sendable, Hashable {
    public enum Kind: String, Sendable { case link, session }

    public var id: UUID
    public var tokenHash: String
    public var kind: Kind
    /// The name the operator gave when asking for the link (the audit log's `console:<name>`).
    public var operatorName: String
    public var createdAt: Date
    public var expiresAt: Date
    /// When the link was used, or the session ended.
    public var endedAt: Date?

    public init(
        id: UUID = UUID(), tokenHash: String, kind: Kind, operatorName: String, createdAt: Date, expiresAt: Date, endedAt: Date? = nil
    ) {
        self.id = id
        self.tokenHash = tokenHash
        self.kind = kind
        self.operatorName = operatorName
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.endedAt = endedAt
    }

    public func isLive(at now: Date) -> Bool { endedAt == nil && expiresAt > now }
}

/// Counts per UTC day for the console's overview charts.
public struct DailyActivity: Sendable, Hashable {
    /// Days since 1970 (UTC) → count, per series (`user.signed_in`, `user.created`, `sign_in.failed`, `refresh`).
    public var series: [String: [Int: Int]]

    public init(series: [String: [Int: Int]] = [:]) { self.series = series }
}
