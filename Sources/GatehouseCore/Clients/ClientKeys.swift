import Crypto
import CryptoExtras
import Foundation

/// A client's public keys (its `jwks` setting, a JWK Set): what its signed request objects are
/// checked with. Only public RSA keys of 2048 bits or more and P-256 keys; anything else is refused
/// when the setting is made, so a request never meets a key it cannot use.
struct ClientKeys: Sendable {
    enum Key: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case ec(P256.Signing.PublicKey)

        var algorithm: SigningAlgorithm {
            switch self {
            case .rsa: .rs256
            case .ec: .es256
            }
        }

        func verifies(_ signature: Data, over input: Data) -> Bool {
            switch self {
            case .rsa(let key):
                key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
            case .ec(let key):
                (try? P256.Signing.ECDSASignature(rawRepresentation: signature)).map { key.isValidSignature($0, for: input) } ?? false
            }
        }
    }

    let keys: [(kid: String?, key: Key)]

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses a JWK Set; throws ``Invalid`` naming what is wrong.
    init(json: String) throws {
        guard json.utf8.count <= 16 * 1024,
            let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let list = object["keys"] as? [[String: Any]], !list.isEmpty, list.count <= 10
        else { throw Invalid(description: "a JWK Set ({\"keys\": [...]}) of one to ten keys, at most 16 KiB") }
        func bytes(_ jwk: [String: Any], _ member: String) throws -> Data {
            guard let text = jwk[member] as? String, let data = Base64URL.decode(text) else {
                throw Invalid(description: "a key lacks \(member) in base64url")
            }
            return Data(data)
        }
        var keys: [(String?, Key)] = []
        for jwk in list {
            if ["d", "p", "q", "dp", "dq", "qi", "k"].contains(where: { jwk[$0] != nil }) {
                throw Invalid(description: "public keys only (a key has private members)")
            }
            if let use = jwk["use"] as? String, use != "sig" { continue }
            let kid = jwk["kid"] as? String
            switch jwk["kty"] as? String {
            case "RSA":
                let key: _RSA.Signing.PublicKey
                do {
                    key = try _RSA.Signing.PublicKey(n: try bytes(jwk, "n"), e: try bytes(jwk, "e"))
                } catch let invalid as Invalid {
                    throw invalid
                } catch {
                    throw Invalid(description: "an RSA key does not parse")
                }
                guard key.keySizeInBits >= 2048 else { throw Invalid(description: "RSA keys of 2048 bits or more") }
                keys.append((kid, .rsa(key)))
            case "EC":
                guard jwk["crv"] as? String == "P-256",
                    let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + (try bytes(jwk, "x")) + (try bytes(jwk, "y")))
                else { throw Invalid(description: "EC keys on P-256 only") }
                keys.append((kid, .ec(key)))
            default:
                throw Invalid(description: "RSA or EC keys only")
            }
        }
        self.keys = keys
    }

    /// The key a JWS header names: by `kid`, or the only key of the algorithm's type when it has none.
    func key(kid: String?, algorithm: SigningAlgorithm) -> Key? {
        let candidates = keys.filter { $0.key.algorithm == algorithm }
        if let kid { return candidates.first { $0.kid == kid }?.key }
        return candidates.count == 1 ? candidates[0].key : nil
    }
}
