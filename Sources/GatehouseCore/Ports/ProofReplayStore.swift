import Foundation

/// Once-only records of DPoP proofs (RFC 9449 §11.1), shared by every node.
public protocol ProofReplayStore: Sendable {
    /// Records `key` until `until`; false when it is recorded already (a replay).
    func claim(key: String, until: Date) async throws -> Bool
}
