import Foundation

/// The database: reads, and all-or-nothing transactions.
public protocol Persistence: Sendable {
    /// Runs `body` against the stores outside a transaction (each statement on its own).
    func read<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R
    /// Reachability and schema check for readiness probes.
    func ping() async throws
    func shutdown() async
}

/// Store-level failures the flows must tell apart.
public enum StoreError: Error, Equatable, Sendable {
    /// A unique constraint rejected the write.
    case conflict(String)
}
