import Argon2
import Foundation
import HummingbirdBcrypt

/// What verifying a password against a stored hash found.
public enum PasswordCheck: Sendable, Equatable {
    case mismatch
    /// Correct; `rehash` holds a new Argon2id hash when the stored one used older parameters or bcrypt.
    case match(rehash: String?)
}

/// Hashes and verifies passwords: Argon2id (PHC strings) for everything new, bcrypt for imported hashes.
public struct PasswordHasher: Sendable {
    public let parameters: Argon2Parameters
    private let pool: HashingPool
    /// Verified against when the account does not exist, so that an unknown email costs the same time.
    private let dummyHash: String

    static let maxIterations: UInt32 = 64
    static let maxMemoryKiB: UInt32 = 1 << 20  // 1 GiB

    public init(parameters: Argon2Parameters, pool: HashingPool) throws {
        self.parameters = parameters
        self.pool = pool
        self.dummyHash = try Argon2.hashPHC(password: "gatehouse-dummy-password", parameters: parameters)
    }

    public func hash(_ password: String) async throws -> String {
        let parameters = self.parameters
        return try await run { try Argon2.hashPHC(password: password, parameters: parameters) }
    }

    public func verify(_ password: String, against stored: String) async throws -> PasswordCheck {
        let parameters = self.parameters
        return try await run {
            if stored.hasPrefix("$argon2id$") {
                let phc = try Argon2PHC(stored)
                // A stored hash is data: an imported or tampered one must not make a login burn minutes.
                guard phc.parameters.iterations <= Self.maxIterations, phc.parameters.memoryKiB <= Self.maxMemoryKiB
                else { return .mismatch }
                guard try phc.verify(password: password) else { return .mismatch }
                guard phc.needsRehash(comparedTo: parameters) else { return .match(rehash: nil) }
                return .match(rehash: try Argon2.hashPHC(password: password, parameters: parameters))
            }
            if stored.hasPrefix("$2a$") || stored.hasPrefix("$2b$") || stored.hasPrefix("$2y$") {
                guard Bcrypt.verify(password, hash: stored) else { return .mismatch }
                return .match(rehash: try Argon2.hashPHC(password: password, parameters: parameters))
            }
            return .mismatch
        }
    }

    /// Burns the same work as a real verification, for unknown accounts.
    public func verifyDummy(_ password: String) async throws {
        _ = try await verify(password, against: dummyHash)
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await pool.run(work)
        } catch is HashingPool.Saturated {
            // One queue's worth of hashes, rounded up: about when a slot frees again.
            throw GatehouseError.busy(retryAfter: 1)
        }
    }
}
