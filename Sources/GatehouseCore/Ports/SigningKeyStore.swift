import Foundation

/// Signing keys.
public protocol SigningKeyStore: Sendable {
    func insert(_ key: SigningKeyRecord) async throws
    /// Every key that may still verify a token at `now` (the current one first).
    func listPublished(now: Date) async throws -> [SigningKeyRecord]
    /// Retires every current key of `algorithm` but `kid`, publishing each until `publishUntil`.
    func retire(algorithm: String, except kid: String, at: Date, publishUntil: Date) async throws
    /// Ends a key's publication now (retiring it if it was current); returns whether it was published.
    func revoke(kid: String, at: Date) async throws -> Bool
}
