import Crypto
import Foundation

/// Who Gatehouse is to authenticators: the RP ID credentials are scoped to, the origins whose client
/// data it accepts (web origins and native apps' `android:apk-key-hash:` origins), and the roots
/// attestation chains are checked against.
public struct RelyingParty: Sendable {
    public var id: String
    public var name: String
    public var origins: Set<String>
    public var attestationRoots: AttestationRoots
    /// SHA-256 of the RP ID, which every authenticator data starts with.
    public let idHash: [UInt8]

    public init(id: String, name: String, origins: Set<String>, attestationRoots: AttestationRoots = AttestationRoots()) {
        self.id = id
        self.name = name
        self.origins = origins
        self.attestationRoots = attestationRoots
        self.idHash = Array(SHA256.hash(data: Array(id.utf8)))
    }
}

/// Whether the authenticator must verify the user (PIN, biometrics), as WebAuthn's
/// `UserVerificationRequirement` names it.
public enum UserVerificationRequirement: String, Sendable, Codable {
    case required
    case preferred
    case discouraged
}
