import Foundation

/// What a chain refresh asks the session store to check and write in one statement.
public struct RefreshChainClaim: Sendable {
    /// For a public client: the key a bound session must hold (nil: the session must be unbound), and
    /// the key an unbound session is bound to now (RFC 9449 §5).
    public struct DPoP: Sendable {
        public var match: String?
        public var bind: String?
    }

    public var sessionID: UUID
    /// The generation presented and the hash of the token presented; nil for a session on token rows
    /// moving to a chain (its first generation is 1, token 0 being the row token just presented).
    public var from: (generation: Int, tokenHash: String)?
    /// The hash of the token that becomes current.
    public var nextHash: String
    public var clientID: String
    public var now: Date
    /// When the next token idles out.
    public var expiresAt: Date
    /// Nil: no key condition (a confidential client, or the key was checked already).
    public var dpop: DPoP?

    public var next: Int { (from?.generation ?? 0) + 1 }
}
