import Crypto
import Foundation

/// Keys whose outputs are stored or handed out and cannot be recomputed under another key: pairwise
/// subjects (relying parties keep them as the user's id) and recovery-code identifiers (a keyed hash
/// of codes only the user holds). Rotating the server secret must not change them, so they are
/// random keys kept in the database, sealed under the server secret and resealed by
/// `gatehouse secret rotate` like every other secret at rest.
public struct StableSecretKeys: Sendable {
    let pairwiseKey: SymmetricKey
    let recoveryCodeKey: SymmetricKey

    init(pairwiseKey: SymmetricKey, recoveryCodeKey: SymmetricKey) {
        self.pairwiseKey = pairwiseKey
        self.recoveryCodeKey = recoveryCodeKey
    }

    /// What a database written before the keys were stored used: the keys its oldest secret derived,
    /// so subjects and codes already out there keep working.
    init(legacy keys: DerivedSecretKeys) {
        self.init(pairwiseKey: keys.legacyPairwiseKey, recoveryCodeKey: keys.codeKey)
    }

    /// Both keys, 64 bytes, to seal.
    var material: Data {
        pairwiseKey.withUnsafeBytes { Data($0) } + recoveryCodeKey.withUnsafeBytes { Data($0) }
    }

    init(material: Data) throws {
        guard material.count == 64 else { throw ServerSecretError.malformed("stable keys") }
        self.init(pairwiseKey: SymmetricKey(data: material.prefix(32)), recoveryCodeKey: SymmetricKey(data: material.suffix(32)))
    }
}
