import Crypto
import Foundation

/// A virtual user's DPoP key (RFC 9449), making a fresh proof for each request as the SDK does: the
/// server's cost of a bound session (a signature check and a once-only `jti` record per request) is
/// what the DPoP scenarios measure.
struct BenchDPoPKey: Sendable {
    let key = P256.Signing.PrivateKey()

    /// `htu` is the server's public URL and path: `scripts/bench` serves Gatehouse on the address it names.
    func proof(method: String, url: String, accessToken: String? = nil) throws -> String {
        let point = key.publicKey.x963Representation.dropFirst()
        let jwk =
            #"{"crv":"P-256","kty":"EC","x":"\#(BenchDevice.base64URL(point.prefix(32)))","y":"\#(BenchDevice.base64URL(point.suffix(32)))"}"#
        let header = #"{"alg":"ES256","jwk":\#(jwk),"typ":"dpop+jwt"}"#
        var claims = #"{"htm":"\#(method)","htu":"\#(url)","iat":\#(Int(Date().timeIntervalSince1970)),"jti":"\#(UUID().uuidString)""#
        if let accessToken {
            claims += #","ath":"\#(BenchDevice.base64URL(Data(SHA256.hash(data: Data(accessToken.utf8)))))""#
        }
        claims += "}"
        let input = BenchDevice.base64URL(Data(header.utf8)) + "." + BenchDevice.base64URL(Data(claims.utf8))
        return input + "." + BenchDevice.base64URL(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }
}
