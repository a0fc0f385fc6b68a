import Crypto
import Foundation

/// The `social` scenario's provider: signs an ES256 ID token per request (a fresh nonce each, so every
/// request is a new, valid token, as from an app) for one of the seeded subjects. The server checks it
/// against the JWKS `scripts/bench` serves for this key.
public struct BenchIdentityProvider: Sendable {
    public static let providerID = "bench"
    public static let issuer = "https://bench-idp.example"
    public static let audience = "bench-app"
    /// The `social-access` scenario's provider: GitHub's API as `scripts/bench` serves it.
    public static let accessProviderID = "bench-gh"

    let key: P256.Signing.PrivateKey

    public init(pemFile: String) throws {
        let pem = try String(contentsOfFile: pemFile, encoding: .utf8)
        self.key = try P256.Signing.PrivateKey(pemRepresentation: pem)
    }

    /// Writes a new key to `pemFile` (0600) and returns its JWKS, for the server's providers file.
    public static func makeKey(pemFile: String) throws -> String {
        let key = P256.Signing.PrivateKey()
        guard
            FileManager.default.createFile(
                atPath: pemFile, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        let raw = key.publicKey.rawRepresentation
        let x = base64URL(raw.prefix(32)), y = base64URL(raw.suffix(32))
        return #"{"keys":[{"kty":"EC","crv":"P-256","use":"sig","alg":"ES256","kid":"bench-key","x":"\#(x)","y":"\#(y)"}]}"#
    }

    /// A token and its raw nonce for subject `bench-<pick % subjects>`.
    func mint(pick: Int, subjects: Int) throws -> (token: String, nonce: String) {
        let nonce = UUID().uuidString
        let now = Int(Date().timeIntervalSince1970)
        let subject = "bench-\(pick % max(1, subjects))"
        let header = #"{"alg":"ES256","kid":"bench-key","typ":"JWT"}"#
        let claims =
            #"{"aud":"\#(Self.audience)","email":"\#(subject)@idp.example","email_verified":true,"exp":\#(now + 600),"iat":\#(now),"iss":"\#(Self.issuer)","nonce":"\#(nonce)","sub":"\#(subject)"}"#
        let input = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
        let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        return (input + "." + Self.base64URL(signature), nonce)
    }

    /// GatehouseCore's `Base64URL` is not a dependency of the load generator (it also drives peers).
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
