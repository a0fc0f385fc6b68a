import Crypto
import Foundation

/// The keys one server secret gives, each HKDF-derived for its own purpose so that no two purposes
/// share key material.
struct DerivedSecretKeys: Sendable {
    let sealingKey: SymmetricKey
    let successorKey: SymmetricKey
    let refreshChainKey: SymmetricKey
    let codeKey: SymmetricKey
    let csrfKey: SymmetricKey
    /// Only for a database that has no stable keys yet: its pairwise subjects and recovery-code
    /// identifiers were made with these (see ``StableSecretKeys``).
    let legacyPairwiseKey: SymmetricKey
    /// Names the secret in messages and in the database without revealing anything of it.
    let fingerprint: String

    init(bytes: [UInt8]) throws {
        guard bytes.count >= 32 else { throw ServerSecretError.tooShort }
        let master = SymmetricKey(data: bytes)
        func derive(_ info: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: master, salt: Data("gatehouse".utf8), info: Data(info.utf8), outputByteCount: 32)
        }
        sealingKey = derive("seal:v1")
        successorKey = derive("refresh-successor:v1")
        refreshChainKey = derive("refresh-chain:v1")
        codeKey = derive("one-time-code:v1")
        csrfKey = derive("csrf:v1")
        legacyPairwiseKey = derive("pairwise-subject:v1")
        fingerprint = String(derive("fingerprint:v1").withUnsafeBytes { Secrets.hex(Array($0)) }.prefix(12))
    }
}
