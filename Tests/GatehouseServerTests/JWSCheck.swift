import Crypto
import CryptoExtras
import Foundation
import Testing

/// A compact JWS checked as a relying party checks it: the JWKS key its header's `kid` names, of the
/// header's algorithm, verifies the signature (RS256 with PKCS #1 v1.5, ES256 raw r‖s). Written with
/// swift-crypto directly so the tests do not verify Gatehouse's tokens with Gatehouse's own code.
enum JWSCheck {
    static func verify(_ jws: String, jwks: [[String: Any]]) throws -> (header: [String: Any], claims: [String: Any]) {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        let header = try #require(try JSONSerialization.jsonObject(with: decodeSegment(parts[0])) as? [String: Any])
        let key = try #require(jwks.first { $0["kid"] as? String == header["kid"] as? String }, "\(header)")
        #expect(key["alg"] as? String == header["alg"] as? String)
        let input = Data((parts[0] + "." + parts[1]).utf8)
        let signature = try decodeSegment(parts[2])
        if header["alg"] as? String == "RS256" {
            let rsa = try _RSA.Signing.PublicKey(
                n: try decodeSegment(try #require(key["n"] as? String)), e: try decodeSegment(try #require(key["e"] as? String)))
            #expect(rsa.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5))
        } else {
            let ec = try P256.Signing.PublicKey(
                x963Representation: [0x04] + decodeSegment(try #require(key["x"] as? String))
                    + decodeSegment(try #require(key["y"] as? String)))
            #expect(ec.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: input))
        }
        let claims = try #require(try JSONSerialization.jsonObject(with: decodeSegment(parts[1])) as? [String: Any])
        return (header, claims)
    }
}
