import Crypto
import Foundation

/// The server secrets in force and the keys derived from them: a ring whose first secret seals and
/// signs, while the previous ones still open and verify, so a secret is rotated without a moment in
/// which some node cannot read what another wrote (`docs/operations.md`, "Rotating the server secret").
public struct ServerSecret: Sendable {
    /// The current secret's keys first.
    let ring: [DerivedSecretKeys]
    /// The database's stable keys once ``adopting(_:)`` gave them; until then those the oldest secret
    /// derives, which is what a database without stored keys used.
    let stable: StableSecretKeys

    private var current: DerivedSecretKeys { ring[0] }

    public init(bytes: [UInt8]) throws { try self.init(ring: [bytes]) }

    /// `ring[0]` is the current secret; the rest are previous ones, still opened and verified.
    public init(ring: [[UInt8]]) throws {
        guard !ring.isEmpty else { throw ServerSecretError.tooShort }
        let keys = try ring.map { try DerivedSecretKeys(bytes: $0) }
        self.ring = keys
        self.stable = StableSecretKeys(legacy: keys[keys.count - 1])
    }

    private init(ring: [DerivedSecretKeys], stable: StableSecretKeys) {
        self.ring = ring
        self.stable = stable
    }

    /// The same ring with the database's stable keys.
    public func adopting(_ stable: StableSecretKeys) -> ServerSecret { ServerSecret(ring: ring, stable: stable) }

    /// The stable keys a database without any should store: those its data was made with so far.
    public var initialStableKeys: StableSecretKeys { stable }

    /// Fingerprints of the ring's secrets, current first: what logs and `gatehouse secret status` name.
    public var fingerprints: [String] { ring.map(\.fingerprint) }

    // MARK: Sealing

    /// AES-GCM seals `plaintext` under the current secret; the result is base64 of nonce‖ciphertext‖tag.
    public func seal(_ plaintext: Data) throws -> String {
        try AES.GCM.seal(plaintext, using: current.sealingKey).combined!.base64EncodedString()
    }

    /// Opens a value sealed under any secret of the ring (the current one is tried first: after a
    /// rotation nearly everything is under it).
    public func open(_ sealed: String) throws -> Data {
        try openWithIndex(sealed).plaintext
    }

    /// The value sealed again under the current secret, or nil when it already is. Throws when no
    /// secret of the ring opens it.
    public func resealed(_ sealed: String) throws -> String? {
        let (plaintext, index) = try openWithIndex(sealed)
        return index == 0 ? nil : try seal(plaintext)
    }

    private func openWithIndex(_ sealed: String) throws -> (plaintext: Data, index: Int) {
        guard let combined = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: combined) else {
            throw ServerSecretError.malformed("sealed box")
        }
        for (index, keys) in ring.enumerated() {
            if let plaintext = try? AES.GCM.open(box, using: keys.sealingKey) { return (plaintext, index) }
        }
        throw ServerSecretError.unopenable
    }

    public func sealStable(_ keys: StableSecretKeys) throws -> String { try seal(keys.material) }

    public func openStable(_ sealed: String) throws -> StableSecretKeys { try StableSecretKeys(material: open(sealed)) }

    // MARK: Keyed hashes

    /// The deterministic successor of a refresh token, so a retry inside the grace interval gets the same
    /// successor without the server ever storing a plaintext token. Current secret only: a retry that
    /// straddles a promotion (seconds) gets a successor that was never stored, and signs in again.
    public func refreshSuccessor(of token: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: current.successorKey)
        return RefreshTokenFormat.prefix + Base64URL.encode(Array(mac))
    }

    /// A chain token, MAC'd under the current secret.
    public func refreshChainToken(_ token: RefreshChainToken) -> String {
        token.formatted(mac: Array(HMAC<SHA256>.authenticationCode(for: token.signedBytes, using: current.refreshChainKey)))
    }

    /// The chain token whose hash is `hash`, made under whichever secret of the ring made it: a retry
    /// inside the grace interval gets back the very token the first refresh issued, even when a
    /// promotion came between the two.
    public func refreshChainToken(_ token: RefreshChainToken, hashing hash: String) -> String? {
        ring.lazy.map { keys in
            token.formatted(mac: Array(HMAC<SHA256>.authenticationCode(for: token.signedBytes, using: keys.refreshChainKey)))
        }
        .first { Secrets.constantTimeEquals(Secrets.sha256Hex($0), hash) }
    }

    /// Generation 1 of the chain a session on token rows moves onto when `rowToken`, its head, is
    /// refreshed. Its seed is derived from the row token (as a row successor is), so a retry inside
    /// the grace gets the same token.
    public func chainToken(movingRowToken rowToken: String, session: UUID) -> RefreshChainToken {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(("row-to-chain\u{0}" + rowToken).utf8), using: current.refreshChainKey)
        return RefreshChainToken(sessionID: session, generation: 1, seed: Array(Array(mac).prefix(16)))
    }

    /// Whether `token` is one this server made, under any secret of the ring, compared in constant time.
    /// Only such a token may end a session as reused.
    public func verifies(_ token: RefreshChainToken) -> Bool {
        let message = token.signedBytes
        return ring.reduce(false) { matched, keys in
            Secrets.constantTimeEquals(token.mac, Array(HMAC<SHA256>.authenticationCode(for: message, using: keys.refreshChainKey)))
                || matched
        }
    }

    /// The form token that goes with a CSRF cookie nonce: a forged form cannot know it, and the server
    /// keeps no state for it.
    public func csrfToken(for nonce: String) -> String { Self.csrf(nonce, current.csrfKey) }

    /// Whether `sent` is the form token of `nonce` under any secret of the ring (a form rendered just
    /// before a rotation still posts), compared in constant time.
    public func csrfMatches(_ sent: String, for nonce: String) -> Bool {
        Secrets.constantTimeEqualsAny(sent, ring.map { Self.csrf(nonce, $0.csrfKey) })
    }

    private static func csrf(_ nonce: String, _ key: SymmetricKey) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Data(nonce.utf8), using: key)))
    }

    /// A pairwise subject identifier (OIDC Core §8.1): the same user and sector always give the same
    /// value, and no one without the key can link two sectors' values or recover the user id. The
    /// key is one of the database's stable keys: rotating the secret does not change subjects.
    public func pairwiseSubject(userID: String, sector: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data((sector + "\u{0}" + userID).utf8), using: stable.pairwiseKey)
        return Base64URL.encode(Array(mac))
    }

    /// Keyed hash for short codes: a plain SHA-256 of a 6-digit code is reversed by trying all million.
    /// Under the current secret; ``codeHashes(_:binding:)`` gives what a stored one may be.
    public func codeHash(_ code: String, binding: String) -> String { Self.codeHash(code, binding, current.codeKey) }

    /// The hash of `code` under each secret of the ring: a code sent before a rotation still verifies.
    public func codeHashes(_ code: String, binding: String) -> [String] { ring.map { Self.codeHash(code, binding, $0.codeKey) } }

    /// The stored identifier of a long-lived code (recovery codes), under a stable key: such codes
    /// outlive any rotation and cannot be hashed again without the code.
    public func stableCodeHash(_ code: String, binding: String) -> String { Self.codeHash(code, binding, stable.recoveryCodeKey) }

    private static func codeHash(_ code: String, _ binding: String, _ key: SymmetricKey) -> String {
        Secrets.hex(Array(HMAC<SHA256>.authenticationCode(for: Data((binding + "\u{0}" + code).utf8), using: key)))
    }
}
