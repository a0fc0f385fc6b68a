import Foundation

/// A one-time code and/or link token, bound to one purpose, identifier and client.
public struct OneTimeCodeRecord: Sendable, Hashable {
    public struct Purpose: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let verifyEmail = Purpose(rawValue: "verify_email")
        public static let recovery = Purpose(rawValue: "recovery")
        public static let login = Purpose(rawValue: "login")
        /// A code by mail or text completing a sign-in that waits for its second factor.
        public static let secondFactor = Purpose(rawValue: "second_factor")
        /// A code proving the address an anonymous account takes (``AnonymousAccountsFlow``).
        public static let upgrade = Purpose(rawValue: "upgrade")
    }

    public var id: UUID
    public var purpose: Purpose
    /// The normalized email or phone number the code was sent to.
    public var identifier: String
    public var clientID: String
    public var userID: UUID?
    /// HMAC-SHA256 (hex) of the code under the server secret; 6 digits are too few for a plain hash.
    public var codeHash: String?
    /// SHA-256 (hex) of the link token.
    public var tokenHash: String?
    public var attempts: Int
    public var maxAttempts: Int
    /// Flow data that must survive until the code is used (redirect target, PKCE challenge), as JSON.
    public var data: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var consumedAt: Date?

    public init(
        id: UUID = UUID(), purpose: Purpose, identifier: String, clientID: String, userID: UUID?, codeHash: String?,
        tokenHash: String?, attempts: Int = 0, maxAttempts: Int, data: String?, createdAt: Date, expiresAt: Date,
        consumedAt: Date? = nil
    ) {
        self.id = id
        self.purpose = purpose
        self.identifier = identifier
        self.clientID = clientID
        self.userID = userID
        self.codeHash = codeHash
        self.tokenHash = tokenHash
        self.attempts = attempts
        self.maxAttempts = maxAttempts
        self.data = data
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
    }
}
