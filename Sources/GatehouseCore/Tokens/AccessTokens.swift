import Foundation
import GatehouseAPI
import JWTKit
import NIOCore

/// Issues and verifies access tokens (RFC 9068 JWTs, ES256 unless the client asks for RS256) and OIDC
/// ID tokens (RS256 unless the client asks for ES256).
public struct AccessTokens: Sendable {
    public let keys: SigningKeys
    public let issuer: String
    /// Gatehouse is the resource server of its own `/v1` API, so it is the audience.
    public var audience: String { issuer }
    /// The `sub` each client is shown: the user id, or a pairwise value.
    public let subjects: SubjectIdentifiers
    private let clock: any WallClock
    private let verified = VerifiedTokenCache()

    public init(keys: SigningKeys, issuer: String, clock: any WallClock, subjects: SubjectIdentifiers) {
        self.keys = keys
        self.issuer = issuer
        self.clock = clock
        self.subjects = subjects
    }

    /// `resources`: the resource servers the token is also for (the client's `audiences`, or the one
    /// a token request named); the issuer is always the first audience.
    /// `dpopKey`: the thumbprint of the DPoP key the token is bound to (`cnf.jkt`), if it is.
    /// `actor`: the client acting as the subject (`act`, RFC 8693). `includeIssuer: false` leaves
    /// Gatehouse's own API out of the audience (an exchanged token is for its downstream service alone).
    /// `authTime`: when the user signed in, for a user's token (its `acr` follows from `amr`); nil for a
    /// client's own.
    public func issue(
        subject: String, sessionID: String, clientID: String, scope: String, amr: [String], ttl: Int, resources: [String] = [],
        authTime: Date? = nil, extraClaims: [String: JSONValue] = [:], algorithm: SigningAlgorithm = .es256, dpopKey: String? = nil,
        actor: String? = nil, includeIssuer: Bool = true
    ) async throws -> String {
        let now = Int(clock.now().timeIntervalSince1970)
        let others = resources.filter { $0 != audience }
        var claims = AccessTokenClaims(
            iss: issuer, sub: subject, aud: Audience(includeIssuer ? [audience] + others : others), exp: now + ttl, iat: now,
            jti: UUID().uuidString.lowercased(),
            clientID: clientID, scope: scope, sid: sessionID, amr: amr)
        if let authTime {
            claims.acr = AssuranceLevel(amr: amr).description
            claims.authTime = Int(authTime.timeIntervalSince1970)
        }
        claims.extra = extraClaims
        claims.cnf = dpopKey.map(Confirmation.init(jkt:))
        claims.act = actor.map { ["sub": $0] }
        return try sign(claims, typ: "at+jwt", algorithm: algorithm)
    }

    public func issueIDToken(
        subject: String, clientID: String, sessionID: String, authTime: Date, nonce: String?, amr: [String],
        acr: String? = nil, accessToken: String? = nil, user: UserClaims, ttl: Int, algorithm: SigningAlgorithm = .rs256
    ) async throws -> String {
        let now = Int(clock.now().timeIntervalSince1970)
        let claims = IDTokenClaims(
            iss: issuer, sub: subject, aud: clientID, exp: now + ttl, iat: now,
            authTime: Int(authTime.timeIntervalSince1970), nonce: nonce, amr: amr, sid: sessionID, acr: acr,
            atHash: accessToken.map(UserClaims.halfHash), user: user)
        return try sign(claims, typ: "JWT", algorithm: algorithm)
    }

    /// A compact JWS (RFC 7515 §7.1) signed by the current key of `algorithm`. Assembled here because
    /// jwt-kit only signs through its key collection's actor; the signature itself is jwt-kit's (raw
    /// r‖s for ES256, PKCS #1 v1.5 for RS256).
    public func sign(_ claims: some Encodable, typ: String, algorithm: SigningAlgorithm) throws -> String {
        let (kid, signer) = try keys.signer(algorithm)
        let header = try JSONBodyWriter.body(SignedHeader(alg: algorithm.rawValue, kid: kid, typ: typ))
        let payload: String
        if let access = claims as? AccessTokenClaims, access.extra.isEmpty {
            payload = Base64URL.encode(try JSONBodyWriter.body(access).readableBytesView)
        } else {
            payload = Base64URL.encode(try Self.encoder.encode(claims))
        }
        let signingInput = Base64URL.encode(header.readableBytesView) + "." + payload
        let signature = try signer.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    private struct SignedHeader: JSONBodyEncodable {
        var alg: String
        var kid: String
        var typ: String

        func writeMembers(to writer: inout JSONBodyWriter) throws {
            writer.member("alg", alg)
            writer.member("kid", kid)
            writer.member("typ", typ)
        }
    }

    /// Sorted keys: the same claims always make the same bytes.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Signature, algorithm, kid, issuer, audience and lifetime; throws 401 `invalid_token` otherwise.
    /// Whether the session is still live is the caller's second check. `forThisServer: false` (for
    /// introspection, which answers for resource servers) takes a token for any audience.
    public func verify(_ token: String, forThisServer: Bool = true) async throws -> AccessTokenClaims {
        guard token.utf8.count <= 8192 else { throw GatehouseError.unauthorized("The access token is malformed.") }
        let cacheKey = VerifiedTokenCache.key(for: token)
        let claims: AccessTokenClaims
        if let hit = verified.entry(for: cacheKey), keys.isPublished(kid: hit.kid) {
            claims = hit.claims
        } else {
            let (kid, checked) = try await verifySignature(token)
            verified.store(.init(kid: kid, claims: checked), for: cacheKey)
            claims = checked
        }
        let now = Int(clock.now().timeIntervalSince1970)
        guard claims.iss == issuer, !forThisServer || claims.aud.contains(audience) else {
            throw GatehouseError.unauthorized("The access token was not issued for this server.")
        }
        guard claims.exp > now else { throw GatehouseError.unauthorized("The access token has expired.") }
        guard claims.iat <= now + 60 else { throw GatehouseError.unauthorized("The access token is not valid yet.") }
        return claims
    }

    private func verifySignature(_ token: String) async throws -> (kid: String, claims: AccessTokenClaims) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes))
        else { throw GatehouseError.unauthorized("The access token is malformed.") }
        // Only our algorithms and our token type: this is what stops `alg: none` and an HS256 token
        // "signed" with the public key before any key is touched; the kid must then be a key of that
        // algorithm.
        guard let algorithm = header.alg.flatMap(SigningAlgorithm.init(name:)), header.typ == "at+jwt" else {
            throw GatehouseError.unauthorized("The access token is not valid.")
        }
        guard let kid = header.kid, let verifier = try await keys.verifier(kid: kid, algorithm: algorithm) else {
            throw GatehouseError.unauthorized("The access token is signed with an unknown key.")
        }
        guard let signature = Base64URL.decode(String(parts[2])), let payload = Base64URL.decode(String(parts[1])),
            (try? verifier.verify(signature, signs: Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)))) == true,
            let claims = try? JSONDecoder().decode(AccessTokenClaims.self, from: Data(payload))
        else { throw GatehouseError.unauthorized("The access token is not valid.") }
        return (kid, claims)
    }

    /// An `id_token_hint` (RP-initiated logout): an ID token this server signed, with a key it still
    /// publishes, expired or not (a hint names a past sign-in); nil for anything else.
    public func verifyIDTokenHint(_ token: String) async -> IDTokenClaims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 8192, parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
            let algorithm = header.alg.flatMap(SigningAlgorithm.init(name:)), header.typ == "JWT", let kid = header.kid,
            let verifier = try? await keys.verifier(kid: kid, algorithm: algorithm),
            let signature = Base64URL.decode(String(parts[2])), let payload = Base64URL.decode(String(parts[1])),
            (try? verifier.verify(signature, signs: Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)))) == true,
            let claims = try? JSONDecoder().decode(IDTokenClaims.self, from: Data(payload)), claims.iss == issuer
        else { return nil }
        return claims
    }

    struct Header: Decodable {
        var alg: String?
        var typ: String?
        var kid: String?
    }
}
