import Crypto
import CryptoExtras
import Foundation
import X509

/// A credential public key as COSE encodes it (RFC 9052 §7, RFC 9053), limited to the three
/// algorithms Gatehouse accepts: ES256 (-7), RS256 (-257) and EdDSA with Ed25519 (-8).
public enum COSEKey: Sendable, Hashable {
    case es256(x: [UInt8], y: [UInt8])
    case rs256(n: [UInt8], e: [UInt8])
    case ed25519(x: [UInt8])

    /// The COSE algorithm identifiers, in the order the registration options offer them.
    public static let supportedAlgorithms = [COSEAlgorithm.es256, .eddsa, .rs256]

    public var algorithm: COSEAlgorithm {
        switch self {
        case .es256: .es256
        case .rs256: .rs256
        case .ed25519: .eddsa
        }
    }

    /// Reads a COSE_Key map. Every parameter the algorithm needs must be there with the right shape;
    /// a key whose `alg` is not one of the three, or whose curve or type does not match it, is refused.
    public init(_ value: CBORValue) throws(WebAuthnError) {
        guard value.mapEntries != nil else { throw .malformed("the credential public key is not a COSE key map") }
        guard let kty = value[int: 1]?.int, let alg = value[int: 3]?.int else {
            throw .malformed("the credential public key has no kty or alg")
        }
        switch (alg, kty) {
        case (COSEAlgorithm.es256.rawValue, 2):
            guard value[int: -1]?.int == 1, let x = value[int: -2]?.bytes, let y = value[int: -3]?.bytes, x.count == 32, y.count == 32
            else { throw .malformed("an ES256 key needs crv P-256 and 32-byte x and y") }
            // Refuses points not on the curve now rather than at the first signature.
            guard (try? P256.Signing.PublicKey(rawRepresentation: x + y)) != nil else {
                throw .malformed("the ES256 key is not a point on P-256")
            }
            self = .es256(x: x, y: y)
        case (COSEAlgorithm.eddsa.rawValue, 1):
            guard value[int: -1]?.int == 6, let x = value[int: -2]?.bytes, x.count == 32 else {
                throw .malformed("an EdDSA key needs crv Ed25519 and a 32-byte x")
            }
            self = .ed25519(x: x)
        case (COSEAlgorithm.rs256.rawValue, 3):
            guard let n = value[int: -1]?.bytes, let e = value[int: -2]?.bytes, !e.isEmpty, e.count <= 8 else {
                throw .malformed("an RS256 key needs n and e")
            }
            // 2048 bits at least (swift-crypto refuses less); 8192 at most, so a key cannot make each
            // sign-in's verification slow.
            guard n.count <= 1024, let key = try? _RSA.Signing.PublicKey(n: n, e: e), key.keySizeInBits >= 2048 else {
                throw .malformed("the RS256 key must be 2048 to 8192 bits")
            }
            self = .rs256(n: n, e: e)
        case (COSEAlgorithm.es256.rawValue, _), (COSEAlgorithm.eddsa.rawValue, _), (COSEAlgorithm.rs256.rawValue, _):
            throw .malformed("the credential key's kty does not fit its alg")
        default:
            throw .unsupportedAlgorithm(alg)
        }
    }

    /// Whether `signature` is this key's signature over `message` (ES256: DER-encoded ECDSA with
    /// SHA-256; RS256: PKCS #1 v1.5 with SHA-256; EdDSA: pure Ed25519), as WebAuthn §6.5.6 encodes them.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        switch self {
        case .es256(let x, let y):
            guard let key = try? P256.Signing.PublicKey(rawRepresentation: x + y),
                let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: message)
        case .rs256(let n, let e):
            guard let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { return false }
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: message, padding: .insecurePKCS1v1_5)
        case .ed25519(let x):
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else { return false }
            return key.isValidSignature(signature, for: message)
        }
    }

    /// The same key as a certificate carries it, so an attestation certificate's key can be compared
    /// with the credential's.
    var certificateKey: Certificate.PublicKey? {
        switch self {
        case .es256(let x, let y): (try? P256.Signing.PublicKey(rawRepresentation: x + y)).map(Certificate.PublicKey.init)
        case .rs256(let n, let e): (try? _RSA.Signing.PublicKey(n: n, e: e)).map(Certificate.PublicKey.init)
        case .ed25519(let x): (try? Curve25519.Signing.PublicKey(rawRepresentation: x)).map(Certificate.PublicKey.init)
        }
    }
}

/// A COSE algorithm identifier (IANA "COSE Algorithms").
public struct COSEAlgorithm: RawRepresentable, Sendable, Hashable, Codable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let es256 = COSEAlgorithm(rawValue: -7)
    public static let eddsa = COSEAlgorithm(rawValue: -8)
    public static let rs256 = COSEAlgorithm(rawValue: -257)
}
