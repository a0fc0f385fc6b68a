import Foundation
import GatehouseAPI
import JWTKit

/// What a verified ID token says about its user.
public struct FederatedClaims: Sendable, Hashable {
    public var subject: String
    public var email: String?
    /// Only `true` when the provider asserted it (`email_verified` true, or the string "true").
    public var emailVerified: Bool
    public var givenName: String?
    public var familyName: String?
    public var name: String?
    /// What the provider returned about the person, as it returned it (the ID token's claims or the
    /// profile API's answer), for ``SocialProvider/keepProfile``.
    public var profile: [String: JSONValue]? = nil
    /// The provider's tokens, when the web flow obtained them and the provider keeps them.
    public var grant: ProviderGrant? = nil
}

/// Checks a provider's ID token (OpenID Connect Core §3.1.3.7): an allowed asymmetric algorithm that
/// fits its key, a signature by one of the provider's published keys, the issuer, one of the
/// operator's app ids as audience, the lifetime with a minute's leeway, and the nonce, raw or as its
/// SHA-256 (Apple hashes it).
struct IDTokenVerifier: Sendable {
    let cache: JWKSCache

    /// Asymmetric only: `none` and the HMAC family would let anyone who knows a public key sign.
    static let algorithms: [String: String] = ["RS256": "RSA", "RS384": "RSA", "RS512": "RSA", "ES256": "EC", "ES384": "EC"]
    static let leeway: TimeInterval = 60

    struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    struct Claims: JWTPayload {
        var iss: String?
        var sub: String?
        var aud: AudienceClaim?
        var exp: Double?
        var iat: Double?
        var nonce: String?
        var email: String?
        var email_verified: FlexibleBool?
        var given_name: String?
        var family_name: String?
        var name: String?

        // Checked by the verifier with its own rules and leeway.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Apple sends `email_verified` as the string "true".
    struct FlexibleBool: Codable, Sendable {
        var value: Bool
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let bool = try? c.decode(Bool.self) { value = bool } else { value = (try? c.decode(String.self)) == "true" }
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(value)
        }
    }

    func verify(_ token: String, provider: SocialProvider, nonce: String, now: Date) async throws -> FederatedClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 8192, parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes))
        else { throw IDTokenError.malformed }
        guard let alg = header.alg, let family = Self.algorithms[alg] else { throw IDTokenError.algorithm }
        if let kid = header.kid, kid.isEmpty || kid.count > 256 { throw IDTokenError.unknownKey }
        guard let (keys, keyType) = try await cache.keys(for: provider, kid: header.kid, now: now) else { throw IDTokenError.unknownKey }
        guard keyType == family else { throw IDTokenError.algorithm }
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self)
        } catch {
            throw IDTokenError.signature
        }
        guard let iss = claims.iss, provider.issuers.contains(iss) else { throw IDTokenError.issuer }
        guard let aud = claims.aud?.value, !Set(aud).isDisjoint(with: provider.clientIDs) else { throw IDTokenError.audience }
        guard let exp = claims.exp, Date(timeIntervalSince1970: exp) > now.addingTimeInterval(-Self.leeway) else {
            throw IDTokenError.expired
        }
        if let iat = claims.iat, Date(timeIntervalSince1970: iat) > now.addingTimeInterval(Self.leeway) { throw IDTokenError.notYetValid }
        guard let sent = claims.nonce,
            Secrets.constantTimeEquals(sent, nonce) || Secrets.constantTimeEquals(sent, Secrets.sha256Hex(nonce))
        else { throw IDTokenError.nonce }
        guard let subject = claims.sub, !subject.isEmpty, subject.count <= 255 else { throw IDTokenError.malformed }
        return FederatedClaims(
            subject: subject, email: claims.email, emailVerified: claims.email_verified?.value ?? false,
            givenName: claims.given_name, familyName: claims.family_name, name: claims.name,
            profile: provider.keepProfile ? Self.profile(parts[1]) : nil)
    }

    /// The ID token's claims as the provider wrote them, less the nonce (this sign-in's, of no use later).
    private static func profile(_ payload: Substring) -> [String: JSONValue]? {
        guard let bytes = Base64URL.decode(String(payload)),
            var claims = try? JSONDecoder().decode([String: JSONValue].self, from: Data(bytes))
        else { return nil }
        claims["nonce"] = nil
        return claims
    }
}
