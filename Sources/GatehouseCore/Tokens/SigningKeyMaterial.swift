import Crypto
import CryptoExtras
import Foundation
import JWTKit

/// One signing key opened from its record: what signs, what verifies, and what the JWKS publishes.
struct SigningKeyMaterial: Sendable {
    let kid: String
    let algorithm: SigningAlgorithm
    let signer: any JWTAlgorithm
    let verifier: any JWTAlgorithm
    let jwk: [String: String]

    /// RSA keys below this size are refused by jwt-kit and by the conformance suite alike.
    static let rsaBits = 2048

    /// A new key of `algorithm`, its private part sealed under the server secret.
    static func generate(_ algorithm: SigningAlgorithm, secret: ServerSecret, now: Date) throws -> SigningKeyRecord {
        switch algorithm {
        case .es256: try record(algorithm, privateKey: P256.Signing.PrivateKey().rawRepresentation, secret: secret, now: now)
        case .rs256:
            try record(
                algorithm, privateKey: _RSA.Signing.PrivateKey(keySize: .init(bitCount: rsaBits)).derRepresentation, secret: secret,
                now: now)
        }
    }

    /// The record of an existing private key (P-256 raw bytes, or an RSA key in DER), sealed under the
    /// server secret; throws for a key that does not parse or an RSA key under 2048 bits.
    static func record(
        _ algorithm: SigningAlgorithm, privateKey privateBytes: Data, secret: ServerSecret, now: Date
    ) throws -> SigningKeyRecord {
        let publicJWK: [String: String]
        switch algorithm {
        case .es256: publicJWK = ecJWK(try P256.Signing.PrivateKey(rawRepresentation: privateBytes).publicKey)
        case .rs256:
            let key = try _RSA.Signing.PrivateKey(derRepresentation: privateBytes)
            guard key.keySizeInBits >= rsaBits else { throw SigningKeysError.weakKey(bits: key.keySizeInBits) }
            publicJWK = try rsaJWK(JWTKit.Insecure.RSA.PublicKey(backing: key.publicKey))
        }
        let kid = Self.kid(publicJWK: publicJWK)
        var jwk = publicJWK
        jwk.merge(["kid": kid, "alg": algorithm.rawValue, "use": "sig"]) { _, new in new }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: jwk, options: [.sortedKeys]), as: UTF8.self)
        return SigningKeyRecord(
            kid: kid, algorithm: algorithm.rawValue, publicJWK: json, sealedPrivateKey: try secret.seal(privateBytes), createdAt: now)
    }

    /// Opens a record. The public half is derived from the sealed private key, not read from
    /// `public_jwk`: someone who can write the database but lacks the server secret cannot plant a
    /// verification key. Throws ``SigningKeysError/secretMismatch(_:)`` when the secret does not open it.
    static func open(_ record: SigningKeyRecord, secret: ServerSecret) async throws -> SigningKeyMaterial {
        guard let algorithm = SigningAlgorithm(name: record.algorithm) else { throw SigningKeysError.unknownAlgorithm(record.algorithm) }
        let opened: Data
        do {
            opened = try secret.open(record.sealedPrivateKey)
        } catch {
            // The usual cause is a database restored or shared without its secret file: say so, rather
            // than print AES-GCM's error code.
            throw SigningKeysError.secretMismatch(record.kid)
        }
        let kid = JWKIdentifier(string: record.kid)
        let signing = JWTKeyCollection()
        let verifying = JWTKeyCollection()
        let publicJWK: [String: String]
        switch algorithm {
        case .es256:
            let key = try P256.Signing.PrivateKey(rawRepresentation: opened)
            publicJWK = ecJWK(key.publicKey)
            await signing.add(ecdsa: try ES256PrivateKey(backing: key), kid: kid)
            await verifying.add(ecdsa: try ES256PublicKey(backing: key.publicKey), kid: kid)
        case .rs256:
            let key = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(derRepresentation: opened))
            publicJWK = try rsaJWK(key.publicKey)
            await signing.add(rsa: key, digestAlgorithm: .sha256, kid: kid)
            await verifying.add(rsa: key.publicKey, digestAlgorithm: .sha256, kid: kid)
        }
        var jwk = publicJWK
        jwk.merge(["kid": record.kid, "alg": algorithm.rawValue, "use": "sig"]) { _, new in new }
        return SigningKeyMaterial(
            kid: record.kid, algorithm: algorithm,
            signer: try await signing.getKey(for: kid, alg: algorithm.rawValue),
            verifier: try await verifying.getKey(for: kid, alg: algorithm.rawValue), jwk: jwk)
    }

    /// The RFC 7638 thumbprint's members, hashed: a kid that follows from the key alone.
    static func kid(publicJWK: [String: String]) -> String {
        let members = publicJWK.keys.sorted().map { "\"\($0)\":\"\(publicJWK[$0]!)\"" }.joined(separator: ",")
        return String(Base64URL.encode(SHA256.hash(data: Data(("{" + members + "}").utf8))).prefix(16))
    }

    static func ecJWK(_ key: P256.Signing.PublicKey) -> [String: String] {
        let x963 = Array(key.x963Representation)  // 0x04 ‖ X ‖ Y
        return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(x963[1..<33]), "y": Base64URL.encode(x963[33..<65])]
    }

    static func rsaJWK(_ key: JWTKit.Insecure.RSA.PublicKey) throws -> [String: String] {
        let (modulus, exponent) = try key.getKeyPrimitives()
        // RFC 7518 §6.3.1: unsigned big-endian without leading zero octets.
        func unsigned(_ data: Data) -> String { Base64URL.encode(Data(data.drop(while: { $0 == 0 }))) }
        return ["kty": "RSA", "n": unsigned(modulus), "e": unsigned(exponent)]
    }
}
