import Foundation

/// The scopes a user let a third-party client have, given on the hosted consent page.
public struct ConsentRecord: Sendable, Hashable {
    public var userID: UUID
    public var clientID: String
    public var scopes: [String]
    public var grantedAt: Date

    public init(userID: UUID, clientID: String, scopes: [String], grantedAt: Date) {
        self.userID = userID
        self.clientID = clientID
        self.scopes = scopes
        self.grantedAt = grantedAt
    }

    /// Whether this consent already covers `requested`: asking for less, or the same, asks nothing new.
    public func covers(_ requested: [String]) -> Bool { Set(requested).isSubset(of: Set(scopes)) }
}
