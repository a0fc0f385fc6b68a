import Foundation

/// Signing-key management, shared by the CLI, the admin API and the console. Audited (`admin.key.…`)
/// in the transaction that changes the keys: both are kept or neither.
public struct KeyAdmin: Sendable {
    let keys: SigningKeys
    let clock: any WallClock

    public init(keys: SigningKeys, clock: any WallClock) {
        self.keys = keys
        self.clock = clock
    }

    private func event(_ action: String, kid: String, actor: AdminActor) -> AuditEvent {
        actor.event(action, at: clock.now(), reason: "kid " + kid)
    }

    /// Adds a key for each algorithm and makes it current. Older keys stay published as long as any
    /// token they signed can live (the longest access-token lifetime a client may configure).
    public func rotate(actor: AdminActor = .commandLine) async throws -> [String] {
        try await keys.load()
        return try await keys.rotate(publishOldFor: TimeInterval(CoreSettings(publicURL: "").maxAccessTokenTTL)) { kids in
            event("key.rotated", kid: kids.joined(separator: ", "), actor: actor)
        }
    }

    /// Stops `kid` verifying anything, now (every node within its one-minute reload). A current key is
    /// replaced first; every token it signed becomes invalid, so its users sign in again (refresh
    /// tokens still work: they are not signed). Returns whether a new key was made.
    public func revoke(kid: String, actor: AdminActor = .commandLine) async throws -> Bool {
        try await keys.revoke(
            kid: kid, publishOthersFor: TimeInterval(CoreSettings(publicURL: "").maxAccessTokenTTL),
            audit: event("key.revoked", kid: kid, actor: actor))
    }

    /// The published keys, current first: kid, creation, and until when a retired one verifies.
    public func list() async throws -> [SigningKeyRecord] { try await keys.published() }
}
