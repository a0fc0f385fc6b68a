import Crypto
import CryptoExtras
import Foundation

/// The public key in a DPoP proof's `jwk` header, for the algorithms Gatehouse accepts, and its
/// RFC 7638 thumbprint. By hand: jwt-kit verifies JWTs against keys it holds, not against a key the
/// token carries, and computes no thumbprints.
struct DPoPKey: Sendable {
    enum Material: Sendable {
        case p256(P256.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
    }

    let material: Material
    /// RFC 7638: base64url SHA-256 of the key's required members, in lexicographic order, no spaces.
    let thumbprint: String

    /// Members a public JWK never has (RFC 7517/7518 private and symmetric parts).
    private static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// The key of `jwk`, when it is a public key of the type `algorithm` signs with.
    init(jwk: [String: Any], algorithm: String) throws(DPoPKeyError) {
        if Self.privateMembers.contains(where: { jwk[$0] != nil }) { throw .privateKey }
        // The thumbprint hashes the members as sent (RFC 7638 §3.3): a padded or otherwise
        // non-canonical base64url spelling would give one key two thumbprints, so only the canonical
        // spelling is taken.
        func member(_ name: String) throws(DPoPKeyError) -> (text: String, bytes: Data) {
            guard let text = jwk[name] as? String, text.utf8.count <= 1400, let bytes = Base64URL.decode(text),
                Base64URL.encode(bytes) == text
            else { throw .malformed }
            return (text, Data(bytes))
        }
        switch (algorithm, jwk["kty"] as? String) {
        case ("ES256", "EC"):
            guard jwk["crv"] as? String == "P-256" else { throw .malformed }
            let x = try member("x")
            let y = try member("y")
            guard x.bytes.count == 32, y.bytes.count == 32,
                let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + x.bytes + y.bytes)
            else { throw .malformed }
            material = .p256(key)
            thumbprint = Self.thumbprint(#"{"crv":"P-256","kty":"EC","x":"\#(x.text)","y":"\#(y.text)"}"#)
        case ("RS256", "RSA"):
            let n = try member("n")
            let e = try member("e")
            guard let key = try? _RSA.Signing.PublicKey(n: n.bytes, e: e.bytes) else { throw .malformed }
            guard key.keySizeInBits >= 2048, key.keySizeInBits <= 8192 else { throw .weakKey }
            material = .rsa(key)
            thumbprint = Self.thumbprint(#"{"e":"\#(e.text)","kty":"RSA","n":"\#(n.text)"}"#)
        case ("EdDSA", "OKP"):
            guard jwk["crv"] as? String == "Ed25519" else { throw .malformed }
            let x = try member("x")
            guard x.bytes.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x.bytes) else {
                throw .malformed
            }
            material = .ed25519(key)
            thumbprint = Self.thumbprint(#"{"crv":"Ed25519","kty":"OKP","x":"\#(x.text)"}"#)
        default:
            throw .wrongType
        }
    }

    /// The members are canonical base64url, so the JSON needs no escaping.
    private static func thumbprint(_ canonical: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8))))
    }

    func verifies(_ signature: Data, over input: Data) -> Bool {
        switch material {
        case .p256(let key):
            guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
                return false
            }
            return key.isValidSignature(parsed, for: input)
        case .rsa(let key):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: input)
        }
    }
}

enum DPoPKeyError: Error {
    case privateKey, malformed, weakKey, wrongType

    var detail: String {
        switch self {
        case .privateKey: "The proof's jwk holds a private key: send the public key only."
        case .malformed: "The proof's jwk is not a usable public key."
        case .weakKey: "RSA keys in DPoP proofs must have 2048 to 8192 bits."
        case .wrongType: "The proof's jwk is not a key of its alg."
        }
    }
}
