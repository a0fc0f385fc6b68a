import Crypto
import Foundation
import JWTKit
import Logging
import Synchronization

/// The signing keys in force: the current one signs, every published one verifies. Kept as an immutable
/// snapshot so a request never parses a key; reloaded from the database so that `keys rotate` run
/// elsewhere (another node, the CLI) takes effect everywhere.
public final class SigningKeys: Sendable {
    struct Snapshot: Sendable {
        let currentKID: String
        /// The current key's signing algorithm, taken out of jwt-kit's collection for the same reason as
        /// the verifiers: signing through the collection's actor queued every token response.
        let signer: any JWTAlgorithm
        /// One verification algorithm per kid, taken out of jwt-kit's key collection once per reload:
        /// calling it directly keeps verification off the collection's actor, where every request
        /// would queue behind every other. A plain dictionary also never falls back to a default key
        /// for an unknown kid, as a collection would.
        let verifiers: [String: any JWTAlgorithm]
        let jwks: Data
    }

    private let persistence: any Persistence
    private let secret: ServerSecret
    private let clock: any WallClock
    private let snapshot: Mutex<Snapshot?> = Mutex(nil)
    private let lastMissReload = Mutex(Date.distantPast)

    public static let algorithm = "ES256"

    public init(persistence: any Persistence, secret: ServerSecret, clock: any WallClock) {
        self.persistence = persistence
        self.secret = secret
        self.clock = clock
    }

    /// Loads the keys, creating the first one on an empty database.
    public func load() async throws {
        let now = clock.now()
        var records = try await persistence.read { try await $0.signingKeys.listPublished(now: now) }
        if records.first(where: { $0.retiredAt == nil }) == nil {
            let record = try Self.makeRecord(secret: secret, now: now)
            try await persistence.transaction { stores in
                // Another node may have created one meanwhile: only add ours if there is still none.
                let existing = try await stores.signingKeys.listPublished(now: now)
                if existing.first(where: { $0.retiredAt == nil }) == nil {
                    try await stores.signingKeys.insert(record)
                }
            }
            records = try await persistence.read { try await $0.signingKeys.listPublished(now: now) }
        }
        let built = try await build(records, now: now)
        snapshot.withLock { $0 = built }
    }

    /// Adds a new key, makes it current, and keeps the old ones published until `publishOldFor` has passed.
    @discardableResult
    public func rotate(publishOldFor: TimeInterval) async throws -> String {
        let now = clock.now()
        let record = try Self.makeRecord(secret: secret, now: now)
        try await persistence.transaction { stores in
            try await stores.signingKeys.insert(record)
            try await stores.signingKeys.retireAll(
                except: record.kid, at: now, publishUntil: now.addingTimeInterval(publishOldFor))
        }
        try await load()
        return record.kid
    }

    /// Emergency revocation: `kid` stops verifying at once here, and on every other node at its next
    /// reload (within a minute). A current key is first replaced by a new one. Returns whether a new
    /// key had to be made; throws ``SigningKeysError/unknownKey`` for a key that is not published.
    @discardableResult
    public func revoke(kid: String, publishOthersFor: TimeInterval) async throws -> Bool {
        try await load()
        let wasCurrent = currentKID == kid
        if wasCurrent { try await rotate(publishOldFor: publishOthersFor) }
        let now = clock.now()
        guard try await persistence.transaction({ try await $0.signingKeys.revoke(kid: kid, at: now) }) else {
            throw SigningKeysError.unknownKey(kid)
        }
        try await load()
        return wasCurrent
    }

    /// The published keys, current first.
    public func published() async throws -> [SigningKeyRecord] {
        let now = clock.now()
        return try await persistence.read { try await $0.signingKeys.listPublished(now: now) }
    }

    public var currentKID: String? { snapshot.withLock { $0?.currentKID } }

    /// Whether tokens signed by `kid` may still be accepted (it is published in the current snapshot).
    func isPublished(kid: String) -> Bool { snapshot.withLock { $0?.verifiers[kid] != nil } }

    /// The JWKS document, serialized once per reload rather than per request.
    public func jwksDocument() throws -> Data {
        guard let snap = snapshot.withLock({ $0 }) else { throw SigningKeysError.notLoaded }
        return snap.jwks
    }

    func signer() throws -> (kid: String, algorithm: any JWTAlgorithm) {
        guard let snap = snapshot.withLock({ $0 }) else { throw SigningKeysError.notLoaded }
        return (snap.currentKID, snap.signer)
    }

    /// The verifier for exactly this kid, reloading at most once every few seconds on a miss (a key
    /// another node just created). `nil` means: unknown kid, reject.
    func verifier(kid: String) async throws -> (any JWTAlgorithm)? {
        if let found = snapshot.withLock({ $0?.verifiers[kid] }) { return found }
        let now = clock.now()
        let shouldReload = lastMissReload.withLock { last -> Bool in
            guard now.timeIntervalSince(last) > 5 else { return false }
            last = now
            return true
        }
        guard shouldReload else { return nil }
        try await load()
        return snapshot.withLock { $0?.verifiers[kid] }
    }

    private func build(_ records: [SigningKeyRecord], now: Date) async throws -> Snapshot {
        guard let current = records.first(where: { $0.retiredAt == nil }) else { throw SigningKeysError.noCurrentKey }
        let opened: Data
        do {
            opened = try secret.open(current.sealedPrivateKey)
        } catch {
            // The usual cause is a database restored or shared without its secret file: say so, rather
            // than print AES-GCM's error code.
            throw SigningKeysError.secretMismatch(current.kid)
        }
        let privateKey = try P256.Signing.PrivateKey(rawRepresentation: opened)
        let signing = JWTKeyCollection()
        await signing.add(ecdsa: try ES256PrivateKey(backing: privateKey), kid: JWKIdentifier(string: current.kid))
        let signer = try await signing.getKey(for: JWKIdentifier(string: current.kid), alg: Self.algorithm)
        var verifiers: [String: any JWTAlgorithm] = [:]
        var jwks: [[String: String]] = []
        for record in records {
            // The public half is derived from the sealed private key, not read from `public_jwk`: someone
            // who can write the database but lacks the server secret cannot plant a verification key.
            guard let sealedKey = try? P256.Signing.PrivateKey(rawRepresentation: try secret.open(record.sealedPrivateKey))
            else { continue }
            let (jwk, x, y) = Self.jwk(for: sealedKey.publicKey, kid: record.kid)
            let collection = JWTKeyCollection()
            await collection.add(
                ecdsa: try ES256PublicKey(parameters: (x: x, y: y)), kid: JWKIdentifier(string: record.kid))
            verifiers[record.kid] = try await collection.getKey(for: JWKIdentifier(string: record.kid), alg: Self.algorithm)
            jwks.append(jwk)
        }
        let document = try JSONSerialization.data(withJSONObject: ["keys": jwks], options: [.sortedKeys])
        return Snapshot(currentKID: current.kid, signer: signer, verifiers: verifiers, jwks: document)
    }

    static func jwk(for key: P256.Signing.PublicKey, kid: String) -> (jwk: [String: String], x: String, y: String) {
        let x963 = Array(key.x963Representation)  // 0x04 ‖ X ‖ Y
        let x = Base64URL.encode(x963[1..<33])
        let y = Base64URL.encode(x963[33..<65])
        return (["kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "alg": algorithm, "use": "sig"], x, y)
    }

    static func makeRecord(secret: ServerSecret, now: Date) throws -> SigningKeyRecord {
        let key = P256.Signing.PrivateKey()
        let kid = String(Base64URL.encode(SHA256.hash(data: key.publicKey.x963Representation)).prefix(16))
        let (jwk, _, _) = jwk(for: key.publicKey, kid: kid)
        let json = String(decoding: try JSONSerialization.data(withJSONObject: jwk, options: [.sortedKeys]), as: UTF8.self)
        return SigningKeyRecord(
            kid: kid, algorithm: algorithm, publicJWK: json, sealedPrivateKey: try secret.seal(key.rawRepresentation),
            createdAt: now)
    }
}

public enum SigningKeysError: Error, CustomStringConvertible {
    case notLoaded
    case noCurrentKey
    /// No published key has this kid (never existed, or already past its publication).
    case unknownKey(String)
    /// The current key does not open with this server secret.
    case secretMismatch(String)

    public var description: String {
        switch self {
        case .notLoaded: "signing keys are not loaded"
        case .noCurrentKey: "there is no current signing key"
        case .unknownKey(let kid): "no published signing key has the kid \(kid)"
        case .secretMismatch(let kid):
            "the current signing key (\(kid)) does not open with this server secret: the database was restored or "
                + "is shared without the secret file it was written with. Give this node that file "
                + "(GATEHOUSE_SECRET_FILE); if it is lost, see docs/operations.md, \"Signing keys\""
        }
    }
}
