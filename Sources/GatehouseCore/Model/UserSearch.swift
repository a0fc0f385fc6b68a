import Foundation
import GatehouseAPI

/// What operators search users by (the admin API): every filter optional, combined with AND; results
/// ordered by creation then id, so a cursor (the last user seen) pages stably while users sign up.
public struct UserSearch: Sendable {
    /// A prefix of the normalized (lowercased) email.
    public var email: String?
    /// A prefix of the E.164 phone number.
    public var phone: String?
    public var id: UUID?
    /// Users holding a credential of this type (`password`, `device_authenticator`).
    public var credentialType: String?
    public var state: UserState?
    public var createdAfter: Date?
    public var createdBefore: Date?
    public var signedInAfter: Date?
    public var signedInBefore: Date?
    /// The last user already seen: results continue after it.
    public var after: (createdAt: Date, id: UUID)?
    public var limit: Int

    public init(limit: Int = 50) { self.limit = limit }
}
