import Crypto
import Foundation
import Synchronization

/// Access tokens whose signature has already been checked, so that a client calling the API many times
/// with one token pays for one ECDSA verification, not one per request. Keyed by the SHA-256 of the
/// whole token: any change to header, claims or signature is a different key, so a hit can only be
/// the exact token that was verified. Only the signature result is reused; issuer, audience, lifetime,
/// the key still being published and the session being live are checked on every request.
///
/// Bounded with two generations: when the young one fills, it becomes the old one and the previous old
/// one is dropped, so memory stays under `2 × capacity` entries and hot tokens survive by being
/// promoted. (No listed package offers a bounded concurrent cache.)
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let kid: String
        let claims: AccessTokenClaims
    }

    private struct Generations {
        var young: [SHA256Digest: Entry] = [:]
        var old: [SHA256Digest: Entry] = [:]
    }

    private let generations = Mutex(Generations())
    let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    static func key(for token: String) -> SHA256Digest { SHA256.hash(data: Data(token.utf8)) }

    func entry(for key: SHA256Digest) -> Entry? {
        generations.withLock { g in
            if let hit = g.young[key] { return hit }
            guard let hit = g.old.removeValue(forKey: key) else { return nil }
            Self.insert(hit, for: key, into: &g, capacity: capacity)
            return hit
        }
    }

    func store(_ entry: Entry, for key: SHA256Digest) {
        generations.withLock { Self.insert(entry, for: key, into: &$0, capacity: capacity) }
    }

    var count: Int { generations.withLock { $0.young.count + $0.old.count } }

    private static func insert(_ entry: Entry, for key: SHA256Digest, into g: inout Generations, capacity: Int) {
        if g.young.count >= capacity {
            g.old = g.young
            g.young = [:]
            g.young.reserveCapacity(capacity)
        }
        g.young[key] = entry
    }
}
