import Crypto
import Foundation
import JWTKit
import Logging
import Synchronization

/// The signing keys in force: one current key per algorithm signs, every published one verifies.
/// Kept as an immutable snapshot so a request never parses a key; reloaded from the database so that
/// `keys rotate` run elsewhere (another node, the CLI) takes effect everywhere.
public final class SigningKeys: Sendable {
    struct Snapshot: Sendable {
        /// The current key of each algorithm, its signing algorithm taken out of jwt-kit's collection
        /// for the same reason as the verifiers: signing through the collection's actor queued every
        /// token response.
        let signers: [SigningAlgorithm: (kid: String, algorithm: any JWTAlgorithm)]
        /// One verification algorithm per kid, taken out of jwt-kit's key collection once per reload:
        /// calling it directly keeps verification off the collection's actor, where every request
        /// would queue behind every other. A plain dictionary also never falls back to a default key
        /// for an unknown kid, as a collection would. The key's algorithm goes with it, so a token
        /// whose header names another is refused before the key is touched.
        let verifiers: [String: (algorithm: SigningAlgorithm, verifier: any JWTAlgorithm)]
        let jwks: Data
    }

    private let persistence: any Persistence
    private let secret: ServerSecret
    private let clock: any WallClock
    private let snapshot: Mutex<Snapshot?> = Mutex(nil)
    private let lastMissReload = Mutex(Date.distantPast)

    public init(persistence: any Persistence, secret: ServerSecret, clock: any WallClock) {
        self.persistence = persistence
        self.secret = secret
        self.clock = clock
    }

    /// Loads the keys, creating a current key for each algorithm that has none (an empty database, or
    /// one written before that algorithm was added).
    public func load() async throws {
        let now = clock.now()
        var records = try await persistence.read { try await $0.signingKeys.listPublished(now: now) }
        let missing = SigningAlgorithm.allCases.filter { Self.current($0, in: records) == nil }
        if !missing.isEmpty {
            let made = try missing.map { try SigningKeyMaterial.generate($0, secret: secret, now: now) }
            try await persistence.transaction { stores in
                // Another node may have created one meanwhile: only add ours where there is still none.
                let existing = try await stores.signingKeys.listPublished(now: now)
                for record in made where Self.current(SigningAlgorithm(name: record.algorithm)!, in: existing) == nil {
                    try await stores.signingKeys.insert(record)
                }
            }
            records = try await persistence.read { try await $0.signingKeys.listPublished(now: now) }
        }
        let built = try await build(records)
        snapshot.withLock { $0 = built }
    }

    private static func current(_ algorithm: SigningAlgorithm, in records: [SigningKeyRecord]) -> SigningKeyRecord? {
        records.first { $0.retiredAt == nil && $0.algorithm == algorithm.rawValue }
    }

    /// Adds a new key for each of `algorithms` and makes it current; the keys it replaces stay
    /// published until `publishOldFor` has passed. `audit` (given the new kids) is appended in the
    /// same transaction, so a crash cannot leave a rotation nobody recorded. Returns the new kids.
    @discardableResult
    public func rotate(
        publishOldFor: TimeInterval, algorithms: [SigningAlgorithm] = SigningAlgorithm.allCases,
        audit: (@Sendable ([String]) -> AuditEvent)? = nil
    ) async throws -> [String] {
        let now = clock.now()
        let records = try algorithms.map { try SigningKeyMaterial.generate($0, secret: secret, now: now) }
        try await persistence.transaction { stores in
            try await Self.makeCurrent(records, stores: stores, now: now, publishOldFor: publishOldFor)
            if let audit { try await stores.audit.append(audit(records.map(\.kid))) }
        }
        try await load()
        return records.map(\.kid)
    }

    private static func makeCurrent(_ records: [SigningKeyRecord], stores: any Stores, now: Date, publishOldFor: TimeInterval) async throws
    {
        for record in records {
            try await stores.signingKeys.insert(record)
            try await stores.signingKeys.retire(
                algorithm: record.algorithm, except: record.kid, at: now, publishUntil: now.addingTimeInterval(publishOldFor))
        }
    }

    /// Emergency revocation: `kid` stops verifying at once here, and on every other node at its next
    /// reload (within a minute). A current key is replaced by a new one of its algorithm in the same
    /// transaction as the revocation and `audit`. Returns whether a new key had to be made; throws
    /// ``SigningKeysError/unknownKey`` for a key that is not published (and changes nothing).
    @discardableResult
    public func revoke(kid: String, publishOthersFor: TimeInterval, audit: AuditEvent? = nil) async throws -> Bool {
        try await load()
        let replaced = snapshot.withLock { snap in snap?.signers.first { $0.value.kid == kid }?.key }
        let now = clock.now()
        let replacement = try replaced.map { try SigningKeyMaterial.generate($0, secret: secret, now: now) }
        try await persistence.transaction { stores in
            if let replacement { try await Self.makeCurrent([replacement], stores: stores, now: now, publishOldFor: publishOthersFor) }
            // Thrown rather than returned so that the replacement above is rolled back with it.
            guard try await stores.signingKeys.revoke(kid: kid, at: now) else { throw SigningKeysError.unknownKey(kid) }
            if let audit { try await stores.audit.append(audit) }
        }
        try await load()
        return replaced != nil
    }

    /// The record of an existing private key (P-256 raw bytes, or RSA in DER), sealed under `secret`,
    /// to insert as a current key: how a test process shares one RSA key among its many servers
    /// instead of generating one each (0.1–0.5 s of CPU).
    public static func record(
        _ algorithm: SigningAlgorithm, privateKey: Data, secret: ServerSecret, now: Date
    ) throws -> SigningKeyRecord {
        try SigningKeyMaterial.record(algorithm, privateKey: privateKey, secret: secret, now: now)
    }

    /// The published keys, current first.
    public func published() async throws -> [SigningKeyRecord] {
        let now = clock.now()
        return try await persistence.read { try await $0.signingKeys.listPublished(now: now) }
    }

    /// The current key of `algorithm`.
    public func currentKID(_ algorithm: SigningAlgorithm) -> String? { snapshot.withLock { $0?.signers[algorithm]?.kid } }

    /// Whether tokens signed by `kid` may still be accepted (it is published in the current snapshot).
    func isPublished(kid: String) -> Bool { snapshot.withLock { $0?.verifiers[kid] != nil } }

    /// The JWKS document, serialized once per reload rather than per request.
    public func jwksDocument() throws -> Data {
        guard let snap = snapshot.withLock({ $0 }) else { throw SigningKeysError.notLoaded }
        return snap.jwks
    }

    func signer(_ algorithm: SigningAlgorithm) throws -> (kid: String, algorithm: any JWTAlgorithm) {
        guard let signer = snapshot.withLock({ $0?.signers[algorithm] }) else { throw SigningKeysError.notLoaded }
        return signer
    }

    /// The verifier for exactly this kid and algorithm, reloading at most once every few seconds on a
    /// miss (a key another node just created). `nil` means: unknown kid, or a key of another
    /// algorithm than the header names; reject.
    func verifier(kid: String, algorithm: SigningAlgorithm) async throws -> (any JWTAlgorithm)? {
        func lookup() -> (any JWTAlgorithm)? {
            snapshot.withLock { snap in snap?.verifiers[kid].flatMap { $0.algorithm == algorithm ? $0.verifier : nil } }
        }
        if let found = lookup() { return found }
        let now = clock.now()
        let shouldReload = lastMissReload.withLock { last -> Bool in
            guard now.timeIntervalSince(last) > 5 else { return false }
            last = now
            return true
        }
        guard shouldReload else { return nil }
        try await load()
        return lookup()
    }

    private func build(_ records: [SigningKeyRecord]) async throws -> Snapshot {
        var signers: [SigningAlgorithm: (kid: String, algorithm: any JWTAlgorithm)] = [:]
        for algorithm in SigningAlgorithm.allCases {
            guard let current = Self.current(algorithm, in: records) else { throw SigningKeysError.noCurrentKey }
            // A current key that does not open is fatal (nothing could be signed); a retired one is
            // only left out of the key set below.
            let material = try await SigningKeyMaterial.open(current, secret: secret)
            signers[algorithm] = (material.kid, material.signer)
        }
        var verifiers: [String: (algorithm: SigningAlgorithm, verifier: any JWTAlgorithm)] = [:]
        var jwks: [[String: String]] = []
        for record in records {
            guard let material = try? await SigningKeyMaterial.open(record, secret: secret) else { continue }
            verifiers[record.kid] = (material.algorithm, material.verifier)
            jwks.append(material.jwk)
        }
        let document = try JSONSerialization.data(withJSONObject: ["keys": jwks], options: [.sortedKeys])
        return Snapshot(signers: signers, verifiers: verifiers, jwks: document)
    }
}
