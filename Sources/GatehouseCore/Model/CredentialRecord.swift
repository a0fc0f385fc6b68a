import Foundation

/// The kind of a credential. Open, so a new strategy (in Gatehouse or a test) brings its own.
public struct CredentialType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let password = CredentialType(rawValue: "password")
    /// A federated identity: identifier `provider:subject`.
    public static let oidc = CredentialType(rawValue: "oidc")
    /// A device-bound key (PIN, biometric, custom authenticator): identifier `device:key id`.
    public static let deviceAuthenticator = CredentialType(rawValue: "device_authenticator")
    /// An authenticator app's shared secret (a second factor): identifier `totp:<credential id>`.
    public static let totp = CredentialType(rawValue: "totp")
    /// One of a user's single-use recovery codes (a second factor): identifier the code's keyed hash.
    public static let recoveryCode = CredentialType(rawValue: "recovery_code")
    /// A passkey (WebAuthn public key credential): identifier its credential id, base64url.
    public static let passkey = CredentialType(rawValue: "passkey")

    public var description: String { rawValue }
}

/// One way a user can prove who they are (the Kratos model): a type, the identifiers it answers to
/// (unique per type across all users), a versioned type-specific configuration, and a failure
/// counter of its own. A user has any number of credentials.
public struct CredentialRecord: Sendable, Hashable {
    public var id: String
    public var userID: UUID
    public var type: CredentialType
    /// Normalized lookup keys: the email and phone for a password, `provider:subject` for a federated
    /// identity, `device:key` for a device authenticator.
    public var identifiers: [String]
    /// Type-specific JSON owned by the type's strategy. Never a plain secret: a password's PHC hash, a
    /// provider's subject and claims, a device's public key.
    public var config: String
    /// The shape of ``config``, so a strategy can upgrade old rows when it reads them.
    public var configVersion: Int
    /// Failed attempts since the last success, counted atomically by the store.
    public var failureCount: Int
    public var lockedUntil: Date?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String = CredentialRecord.makeID(), userID: UUID, type: CredentialType, identifiers: [String], config: String,
        configVersion: Int = 1, failureCount: Int = 0, lockedUntil: Date? = nil, createdAt: Date, updatedAt: Date? = nil
    ) {
        self.id = id
        self.userID = userID
        self.type = type
        self.identifiers = identifiers
        self.config = config
        self.configVersion = configVersion
        self.failureCount = failureCount
        self.lockedUntil = lockedUntil
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    public static func makeID() -> String { UUID().uuidString.lowercased() }

    /// The config decoded as the strategy's type.
    public func decodeConfig<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(config.utf8))
    }

    /// JSON for ``config`` (sorted keys, so equal configs are equal strings).
    public static func encodeConfig<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
