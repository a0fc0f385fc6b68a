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
}
