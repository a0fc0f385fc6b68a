import Foundation
import GatehouseAPI

/// A user as stored: the wire `User` plus what only the server may see.
public struct UserRecord: Sendable, Hashable {
    public var id: UUID
    /// Normalized (trimmed, lowercased) so that lookups and uniqueness ignore case.
    public var email: String?
    public var emailVerified: Bool
    public var phone: String?
    public var phoneVerified: Bool
    /// Normalized by ``Username/normalize(_:)``; unique.
    public var username: String?
    public var profile: Profile
    /// Written by the server, hooks and operators only; the user reads it.
    public var appMetadata: [String: JSONValue]?
    public var state: UserState
    public var createdAt: Date
    public var updatedAt: Date
    public var lastLoginAt: Date?
    /// Whether a password credential exists; filled in by stores, not a column of `users`.
    public var hasPassword: Bool
    /// Whether a provider identity is linked; filled in by stores, so `GET /v1/me` reads the list only
    /// for users who have one.
    public var hasIdentities = false
    /// An anonymous account (``AnonymousSignIn``): no identifier, no credential, until an upgrade gives
    /// it a way to sign in again; housekeeping deletes it once idle.
    public var isAnonymous = false

    public init(
        id: UUID = UUID(), email: String?, emailVerified: Bool = false, phone: String? = nil,
        phoneVerified: Bool = false, profile: Profile = Profile(), appMetadata: [String: JSONValue]? = nil, state: UserState = .active,
        createdAt: Date,
        updatedAt: Date? = nil, lastLoginAt: Date? = nil, hasPassword: Bool = false, username: String? = nil
    ) {
        self.username = username
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.phone = phone
        self.phoneVerified = phoneVerified
        self.profile = profile
        self.appMetadata = appMetadata
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.lastLoginAt = lastLoginAt
        self.hasPassword = hasPassword
    }

    public var wire: User {
        var user = User(
            id: id, email: email, emailVerified: emailVerified, phone: phone, phoneVerified: phoneVerified,
            hasPassword: hasPassword, profile: profile, state: state, createdAt: createdAt, lastLoginAt: lastLoginAt)
        user.appMetadata = appMetadata
        user.username = username
        if isAnonymous { user.isAnonymous = true }
        return user
    }
}
