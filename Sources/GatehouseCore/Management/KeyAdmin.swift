import Foundation

/// Signing-key management, shared by the CLI and the admin API. Audited (`admin.key.…`) right after
/// the change: the key store commits its own transaction.
public struct KeyAdmin: Sendable {
    let keys: SigningKeys
    let persistence: any Persistence
    let clock: any WallClock

    public init(keys: SigningKeys, persistence: any Persistence, clock: any WallClock) {
        self.keys = keys
        self.persistence = persistence
        self.clock = clock
    }

    private func audit(_ action: String, kid: String, actor: AdminActor) async throws {
        let event = actor.event(action, at: clock.now(), reason: "kid " + kid)
        try await persistence.transaction { try await $0.audit.append(event) }
    }

    /// Adds a key for each algorithm and makes it current. Older keys stay published as long as any
    /// token they signed can live (the longest access-token lifetime a client may configure).
    public func rotate(actor: AdminActor = .commandLine) async throws -> [String] {
        try await keys.load()
        let kids = try await keys.rotate(publishOldFor: TimeInterval(CoreSettings(publicURL: "").maxAccessTokenTTL))
        try await audit("key.rotated", kid: kids.joined(separator: ", "), actor: actor)
        return kids
    }

    /// Stops `kid` verifying anything, now (every node within its one-minute reload). A current key is
    /// replaced first; every token it signed becomes invalid, so its users sign in again (refresh
    /// tokens still work: they are not signed). Returns whether a new key was made.
    public func revoke(kid: String, actor: AdminActor = .commandLine) async throws -> Bool {
        let replaced = try await keys.revoke(kid: kid, publishOthersFor: TimeInterval(CoreSettings(publicURL: "").maxAccessTokenTTL))
        try await audit("key.revoked", kid: kid, actor: actor)
        return replaced
    }

    /// The published keys, current first: kid, creation, and until when a retired one verifies.
    public func list() async throws -> [SigningKeyRecord] { try await keys.published() }
}
