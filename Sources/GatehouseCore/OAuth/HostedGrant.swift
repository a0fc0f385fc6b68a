import Foundation

/// What an authorization request through the hosted pages decided: the scopes, its nonce, and the
/// browser session behind the sign-in (its `auth_time`, whether the user authenticated now).
public struct HostedGrant: Codable, Sendable {
    public var scopes: [String]
    public var nonce: String?
    public var authTime: Date
    public var acr: String
    public var browserSessionID: UUID
    /// Single claims the request asked for (`claims` parameter).
    public var claims: RequestedClaims?

    public init(
        scopes: [String], nonce: String?, authTime: Date, acr: String, browserSessionID: UUID, claims: RequestedClaims? = nil
    ) {
        self.scopes = scopes
        self.nonce = nonce
        self.authTime = authTime
        self.acr = acr
        self.browserSessionID = browserSessionID
        self.claims = claims
    }
}
