import Foundation

/// What a sign-in proved, whatever the method: whose account, by which methods (`amr`), how strongly,
/// and whether the sign-in made the account. Every way of signing in produces one and hands it to
/// ``SessionStarter/start(_:client:target:meta:stores:)``.
public struct Authentication: Sendable, Hashable, Codable {
    public var userID: UUID
    public var amr: [String]
    public var isNew: Bool
    /// The credential used, so the sessions end with it (a deleted device key, an unlinked identity).
    public var credentialID: String?
    /// When the user proved who they are, when that was not now (a browser session standing in, a web
    /// session carrying its app session's sign-in time).
    public var authTime: Date?

    public var level: AssuranceLevel { AssuranceLevel(amr: amr) }

    public init(userID: UUID, amr: [String], isNew: Bool = false, credentialID: String? = nil, authTime: Date? = nil) {
        self.userID = userID
        self.amr = amr
        self.isNew = isNew
        self.credentialID = credentialID
        self.authTime = authTime
    }

    /// The same sign-in after a second factor: its method and `mfa` are added.
    func completed(with factor: any SecondFactor) -> Authentication {
        var next = self
        for method in [factor.amr, AuthenticationMethod.multiFactor] where !next.amr.contains(method) { next.amr.append(method) }
        return next
    }
}
