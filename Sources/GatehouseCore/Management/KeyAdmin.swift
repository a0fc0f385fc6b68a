import Foundation

/// Signing-key management, shared by the CLI and the coming admin API.
public struct KeyAdmin: Sendable {
    let keys: SigningKeys

    public init(keys: SigningKeys) { self.keys = keys }

    /// Adds a key and makes it current. Older keys stay published as long as any token they signed
    /// can live (the longest access-token lifetime a client may configure).
    public func rotate() async throws -> String {
        try await keys.load()
        return try await keys.rotate(publishOldFor: TimeInterval(CoreSettings(publicURL: "").maxAccessTokenTTL))
    }

    /// Stops `kid` verifying anything, now (every node within its one-minute reload). A current key is
    /// replaced first; every token it signed becomes invalid, so its users sign in again (refresh
    /// tokens still work: they are not signed). Returns whether a new key was made.
    public func revoke(kid: String) async throws -> Bool {
        try await keys.revoke(kid: kid, publishOthersFor: TimeInterval(CoreSettings(publicURL: "").maxAccessTokenTTL))
    }

    /// The published keys, current first: kid, creation, and until when a retired one verifies.
    public func list() async throws -> [SigningKeyRecord] { try await keys.published() }
}
