import Crypto
import Foundation
import GatehouseCore

/// An OpenID provider's signing side for tests that must forge what a real provider never sends: an
/// ES256 key published as a JWKS (serve ``jwks`` from a ``HookServer``), and ID tokens with any
/// claims, header, key or algorithm. JWTs are assembled by hand so a test can also make the broken
/// ones (`alg: none`, HS256 with the public key as secret, a foreign key under a known `kid`).
public struct TestIDTokenIssuer: Sendable {
    public let key = P256.Signing.PrivateKey()
    public let kid: String
    public let issuer: String

    public init(kid: String = "test-key-1", issuer: String = "https://issuer.example") {
        self.kid = kid
        self.issuer = issuer
    }

    /// The public key as a JWKS document.
    public var jwks: String {
        let raw = key.publicKey.rawRepresentation
        let x = Self.base64URL(raw.prefix(32)), y = Self.base64URL(raw.suffix(32))
        return #"{"keys":[{"kty":"EC","crv":"P-256","use":"sig","alg":"ES256","kid":"\#(kid)","x":"\#(x)","y":"\#(y)"}]}"#
    }

    /// Claims a good token carries; tests change what they attack.
    public func claims(
        subject: String, audience: String, nonce: String, email: String? = nil, emailVerified: Bool = true, now: Date = Date()
    )
        -> [String: any Sendable]
    {
        var claims: [String: any Sendable] = [
            "iss": issuer, "sub": subject, "aud": audience, "nonce": nonce,
            "iat": Int(now.timeIntervalSince1970), "exp": Int(now.timeIntervalSince1970) + 600,
        ]
        if let email {
            claims["email"] = email
            claims["email_verified"] = emailVerified
        }
        return claims
    }

    /// A token signed ES256 with `signer` (this issuer's key unless given) under `kid`.
    public func token(_ claims: [String: any Sendable], kid: String? = nil, signer: P256.Signing.PrivateKey? = nil) throws -> String {
        let input = try Self.signingInput(header: ["alg": "ES256", "typ": "JWT", "kid": kid ?? self.kid], claims: claims)
        let signature = try (signer ?? key).signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Self.base64URL(signature)
    }

    /// `alg: none`, no signature.
    public func unsignedToken(_ claims: [String: any Sendable]) throws -> String {
        try Self.signingInput(header: ["alg": "none", "typ": "JWT", "kid": kid], claims: claims) + "."
    }

    /// HS256 keyed with the public key's bytes: the algorithm-confusion attack.
    public func hmacToken(_ claims: [String: any Sendable]) throws -> String {
        let input = try Self.signingInput(header: ["alg": "HS256", "typ": "JWT", "kid": kid], claims: claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(jwks.utf8)))
        return input + "." + Self.base64URL(Data(mac))
    }

    static func signingInput(header: [String: String], claims: [String: any Sendable]) throws -> String {
        let head = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let body = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return base64URL(head) + "." + base64URL(body)
    }

    static func base64URL(_ data: some DataProtocol) -> String { Base64URL.encode(Data(data)) }
}
