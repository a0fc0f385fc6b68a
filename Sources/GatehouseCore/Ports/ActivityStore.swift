import Foundation

/// What the console's overview charts count.
public protocol ActivityStore: Sendable {
    /// Sign-ins, sign-ups and failed sign-ins (from the audit log) and refreshes (rotated refresh
    /// tokens) per UTC day since `since`.
    func daily(since: Date) async throws -> DailyActivity
}
