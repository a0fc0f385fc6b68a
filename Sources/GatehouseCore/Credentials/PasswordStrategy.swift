import Foundation

/// Passwords: an Argon2id (or imported bcrypt) hash in the credential's config, the user's email and
/// phone as identifiers. Every flow that sets, checks or drops a password goes through here.
public struct PasswordStrategy: CredentialStrategy {
    public struct Submission: Sendable {
        public var identifier: String
        public var password: String

        public init(identifier: String, password: String) {
            self.identifier = identifier
            self.password = password
        }
    }

    /// The config of a password credential (version 1).
    struct Config: Codable {
        var hashedPassword: String

        enum CodingKeys: String, CodingKey { case hashedPassword = "hashed_password" }
    }

    let hasher: PasswordHasher
    let policy: PasswordPolicy

    public init(hasher: PasswordHasher, policy: PasswordPolicy) {
        self.hasher = hasher
        self.policy = policy
    }

    public var type: CredentialType { .password }
    public var amr: [String] { [AuthenticationMethod.password] }
    public var provesIdentifier: Bool { false }

    /// An address (it has an `@`), or else a username: each normalized the way it is stored.
    public func identifier(of submission: Submission) throws -> String {
        let raw = submission.identifier
        let identifier = raw.contains("@") ? EmailAddress.normalize(raw) : Username.normalize(raw)
        // Shape errors come before any lookup, and cost no hash: they reveal nothing about accounts.
        guard !identifier.isEmpty, !submission.password.isEmpty, submission.password.utf8.count <= policy.maxBytes,
            identifier.utf8.count <= EmailAddress.maxLength
        else { throw GatehouseError.invalidCredentials }
        return identifier
    }

    public func verify(_ submission: Submission, against credential: CredentialRecord) async throws -> CredentialVerification {
        try await check(submission.password, against: credential)
    }

    public func verifyUnknown(_ submission: Submission) async throws {
        try await hasher.verifyDummy(submission.password)
    }

    /// A flood of sign-ins beyond what the hashing pool takes is refused before each counts on the
    /// throttle and looks its account up: on PostgreSQL those were two transactions and a read per
    /// refused sign-in, on the connections refreshes need.
    public func holdingCapacity<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await hasher.withPlace(body)
    }

    /// Checks `password` against a stored password credential (sign-in, or the current password before
    /// a change).
    public func check(_ password: String, against credential: CredentialRecord) async throws -> CredentialVerification {
        guard password.utf8.count <= policy.maxBytes, let config = try? credential.decodeConfig(Config.self) else {
            return .rejected
        }
        switch try await hasher.verify(password, against: config.hashedPassword) {
        case .mismatch:
            return .rejected
        case .match(let rehash):
            return .verified(upgradedConfig: try rehash.map { try CredentialRecord.encodeConfig(Config(hashedPassword: $0)) })
        }
    }

    /// Hashes a new password (off the event loops, on the bounded hashing pool).
    public func hash(_ password: String) async throws -> String {
        try await hasher.hash(password)
    }

    /// A password credential for `user` from an already computed hash (sign-up, import, reset).
    public static func credential(for user: UserRecord, hash: String, now: Date) throws -> CredentialRecord {
        CredentialRecord(
            userID: user.id, type: .password, identifiers: Self.identifiers(of: user),
            config: try CredentialRecord.encodeConfig(Config(hashedPassword: hash)), createdAt: now)
    }

    /// Sets the user's password: replaces the hash of an existing credential or adds one. Call inside
    /// the flow's transaction.
    public func setPassword(hash: String, for user: UserRecord, now: Date, stores: any Stores) async throws {
        if var existing = try await stores.credentials.list(userID: user.id, type: .password).first {
            existing.config = try CredentialRecord.encodeConfig(Config(hashedPassword: hash))
            existing.configVersion = 1
            existing.identifiers = Self.identifiers(of: user)
            existing.updatedAt = now
            try await stores.credentials.update(existing)
            try await stores.credentials.resetFailures(id: existing.id)
        } else {
            try await stores.credentials.insert(try Self.credential(for: user, hash: hash, now: now))
        }
    }

    /// Drops the user's password (a squatted account whose address was just proved by someone else).
    public func removePassword(of userID: UUID, stores: any Stores) async throws {
        _ = try await stores.credentials.deleteAll(userID: userID, type: .password)
    }

    /// The user's password credential, if any.
    public func find(userID: UUID, stores: any Stores) async throws -> CredentialRecord? {
        try await stores.credentials.list(userID: userID, type: .password).first
    }

    /// A password answers to the user's email and phone.
    static func identifiers(of user: UserRecord) -> [String] {
        [user.email, user.phone, user.username].compactMap { $0 }
    }
}
