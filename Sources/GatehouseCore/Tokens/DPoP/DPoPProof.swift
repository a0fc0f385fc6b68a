import Foundation

/// A DPoP proof (RFC 9449 §4.2) whose signature holds under the public key in its own header: the
/// claims a request is then checked against (``DPoPVerifier``), and the key's thumbprint tokens are
/// bound to. Everything not in the allow-lists is refused before any key is built: `typ` other than
/// `dpop+jwt`, `alg` other than ES256, RS256 and EdDSA (so `none` and HS256 never reach a verifier),
/// a `jwk` with private members.
public struct DPoPProof: Sendable {
    /// The `alg` values a proof may use, as discovery's `dpop_signing_alg_values_supported` lists them.
    public static let algorithms = ["ES256", "RS256", "EdDSA"]
    /// An RSA key of 8,192 bits makes a proof of about 2.5 KiB; nothing legitimate is longer.
    static let maxLength = 4096

    /// RFC 7638 thumbprint of the proof's key: `cnf.jkt` of the tokens bound to it.
    public let thumbprint: String
    public let jti: String
    public let htm: String
    public let htu: String
    public let iat: Int
    public let ath: String?
    public let nonce: String?

    public init(compact: String) throws {
        func invalid(_ detail: String) -> GatehouseError { GatehouseError.invalidDPoPProof(detail) }
        guard compact.utf8.count <= Self.maxLength else { throw invalid("The DPoP proof is too long.") }
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let payloadBytes = Base64URL.decode(String(parts[1])),
            let claims = try? JSONDecoder().decode(Claims.self, from: Data(payloadBytes)),
            let signature = Base64URL.decode(String(parts[2]))
        else { throw invalid("The DPoP proof is not a signed JWT with jti, htm, htu and iat (whole seconds).") }
        guard header["typ"] as? String == "dpop+jwt" else { throw invalid("The DPoP proof's typ must be dpop+jwt.") }
        guard let alg = header["alg"] as? String, Self.algorithms.contains(alg) else {
            throw invalid("The DPoP proof's alg must be one of \(Self.algorithms.joined(separator: ", ")).")
        }
        guard let jwk = header["jwk"] as? [String: Any] else { throw invalid("The DPoP proof's header has no jwk.") }
        let key: DPoPKey
        do {
            key = try DPoPKey(jwk: jwk, algorithm: alg)
        } catch {
            throw invalid(error.detail)
        }
        let signed = Data(compact.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard key.verifies(Data(signature), over: signed) else { throw invalid("The DPoP proof's signature does not verify.") }

        guard !claims.jti.isEmpty, claims.jti.utf8.count <= 256 else { throw invalid("The DPoP proof needs a jti of 1 to 256 characters.") }
        guard claims.htu.utf8.count <= 2048 else { throw invalid("The DPoP proof's htu is too long.") }
        // The time is compared by subtraction: a value near Int.min or Int.max would overflow it.
        guard (0...(1 << 40)).contains(claims.iat) else { throw invalid("The DPoP proof's iat is not a time.") }
        self.thumbprint = key.thumbprint
        self.jti = claims.jti
        self.htm = claims.htm
        self.htu = claims.htu
        self.iat = claims.iat
        self.ath = claims.ath
        self.nonce = claims.nonce
    }

    /// Decoded strictly: a missing claim, a string `iat` or a fractional one is no proof.
    private struct Claims: Decodable {
        var jti: String
        var htm: String
        var htu: String
        var iat: Int
        var ath: String?
        var nonce: String?
    }
}
