import Foundation

/// The database: reads, and all-or-nothing transactions.
public protocol Persistence: Sendable {
    /// Runs `body` against the stores outside a transaction (each statement on its own).
    func read<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R
    /// Runs `body`, which makes a single write statement (atomic on its own), on the writer without an
    /// explicit transaction: on PostgreSQL that saves the BEGIN and COMMIT round trips of the hot path.
    func write<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R
    /// Reachability and schema check for readiness probes.
    func ping() async throws
    func shutdown() async
}

extension Persistence {
    /// Stores without round trips to save write in a transaction.
    public func write<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R {
        try await transaction(body)
    }
}

/// Store-level failures the flows must tell apart.
public enum StoreError: Error, Equatable, Sendable {
    /// A unique constraint rejected the write.
    case conflict(String)
}
