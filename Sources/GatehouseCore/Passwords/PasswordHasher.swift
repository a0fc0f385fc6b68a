import Argon2
import Foundation
import HummingbirdBcrypt

/// What verifying a password against a stored hash found.
public enum PasswordCheck: Sendable, Equatable {
    case mismatch
    /// Correct; `rehash` holds a new Argon2id hash when the stored one used older parameters or bcrypt.
    case match(rehash: String?)
}

/// Hashes and verifies passwords: Argon2id (PHC strings) for everything new; bcrypt and the other
/// systems' forms (``ForeignPasswordHash``) for imported hashes, each replaced at its first sign-in.
public struct PasswordHasher: Sendable {
    public let parameters: Argon2Parameters
    private let pool: HashingPool
    /// Verified against when the account does not exist, so that an unknown email costs the same time.
    private let dummyHash: String

    /// A stored hash may cost at most this many times the larger of the policy and OWASP's minimum
    /// (memory × passes): an imported or planted hash can make a login slower, never minutes long.
    static let costFactor: UInt64 = 4
    /// bcrypt cost 13 is about half a second; imported hashes rarely go past 12.
    static let maxBcryptCost = 13

    public init(parameters: Argon2Parameters, pool: HashingPool) throws {
        self.parameters = parameters
        self.pool = pool
        self.dummyHash = try Argon2.hashPHC(password: "gatehouse-dummy-password", parameters: parameters)
    }

    public func hash(_ password: String) async throws -> String {
        let parameters = self.parameters
        return try await run { workspace in try Argon2.hashPHC(password: password, parameters: parameters, workspace: workspace) }
    }

    public func verify(_ password: String, against stored: String) async throws -> PasswordCheck {
        let parameters = self.parameters
        return try await run { workspace in
            func rehash() throws -> String { try Argon2.hashPHC(password: password, parameters: parameters, workspace: workspace) }
            if stored.hasPrefix("$argon2id$") {
                let phc = try Argon2PHC(stored)
                // A stored hash is data: an imported or tampered one must not make a login burn minutes.
                guard Self.isAffordable(phc.parameters, policy: parameters) else { return .mismatch }
                guard try phc.verify(password: password, workspace: workspace) else { return .mismatch }
                guard phc.needsRehash(comparedTo: parameters) else { return .match(rehash: nil) }
                return .match(rehash: try rehash())
            }
            if stored.hasPrefix("$2a$") || stored.hasPrefix("$2b$") || stored.hasPrefix("$2y$") {
                guard Self.isAffordableBcrypt(stored), Bcrypt.verify(password, hash: stored) else { return .mismatch }
                return .match(rehash: try rehash())
            }
            // Another system's hash, imported: verified once, then replaced by Argon2id.
            if let foreign = ForeignPasswordHash(stored), foreign.verify(password) {
                return .match(rehash: try rehash())
            }
            return .mismatch
        }
    }

    /// Whether a stored Argon2 hash's cost is within ``costFactor`` of what the server itself spends
    /// (or of OWASP's minimum, when the policy is cheaper, as in tests).
    static func isAffordable(_ stored: Argon2Parameters, policy: Argon2Parameters) -> Bool {
        stored.isAffordable(policy: policy, factor: costFactor)
    }

    /// `$2b$12$…`: the cost is the two digits after the prefix.
    static func isAffordableBcrypt(_ stored: String) -> Bool {
        let bytes = Array(stored.utf8)
        guard bytes.count >= 7, let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)) else { return false }
        return cost <= maxBcryptCost
    }

    /// Whether a hash from outside (an import) is one this server will verify.
    public func accepts(_ hash: String) -> Bool {
        if hash.hasPrefix("$argon2id$") {
            guard let phc = try? Argon2PHC(hash) else { return false }
            return Self.isAffordable(phc.parameters, policy: parameters)
        }
        if hash.utf8.count == 60 && ["$2a$", "$2b$", "$2y$"].contains(where: hash.hasPrefix) { return Self.isAffordableBcrypt(hash) }
        return ForeignPasswordHash(hash) != nil
    }

    /// Burns the same work as a real verification, for unknown accounts.
    public func verifyDummy(_ password: String) async throws {
        _ = try await verify(password, against: dummyHash)
    }

    /// Runs `body` (a sign-in) holding its place in the hashing queue, or answers 503 at once when
    /// there is none (``HashingPool/withPlace(_:)``).
    public func withPlace<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await pool.withPlace(body)
        } catch is HashingPool.Saturated {
            throw Self.busy
        }
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable (Argon2.Workspace) throws -> T) async throws -> T {
        do {
            return try await pool.runHashing(work)
        } catch is HashingPool.Saturated {
            throw Self.busy
        }
    }

    /// One queue's worth of hashes, rounded up: about when a place frees again.
    private static var busy: GatehouseError { .busy(retryAfter: 1) }
}
