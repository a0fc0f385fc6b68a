import Crypto
import Foundation

/// Checks a DPoP proof against the request it came with (RFC 9449 §4.3): the method and URL it names,
/// its age, the access token it is for, the server's nonce when nonces are on, and that its `jti` was
/// never seen before by any node (`dpop_proofs`, the shared once-only record).
///
/// A proof whose `iat` is off by more than a minute (a device whose clock is wrong, or a proof made
/// ahead of time) gets `use_dpop_nonce` with a nonce rather than a refusal: a proof carrying a current
/// nonce is fresh by construction (RFC 9449 §11.1), whatever its `iat` says, so a client with a wrong
/// clock recovers with one retry.
public struct DPoPVerifier: Sendable {
    let persistence: any Persistence
    let secret: ServerSecret
    let clock: any WallClock
    /// Scheme, host, port and path prefix of the public URL: `htu` is checked against it, never against
    /// the request's own Host header, which a proxy or a client may set to anything.
    let base: String
    let requireNonce: Bool

    /// How far `iat` may be from the server's clock either way: a phone's clock is seldom exact.
    static let skew = 60
    /// A proof's `jti` is remembered longer than it can be accepted (with a nonce: two buckets), so a
    /// replay inside the window always finds it.
    static let remembered: TimeInterval = 660
    /// Nonces change every five minutes; the previous one is still taken.
    static let nonceBucket = 300

    public init(persistence: any Persistence, secret: ServerSecret, clock: any WallClock, publicURL: String, requireNonce: Bool) {
        self.persistence = persistence
        self.secret = secret
        self.clock = clock
        self.base = DPoPVerifier.normalised(publicURL).map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? publicURL
        self.requireNonce = requireNonce
    }

    /// The key thumbprint of a proof that holds for `method` on `path`; `accessToken` when the proof
    /// accompanies one (a protected route), whose hash it must carry in `ath`.
    public func verify(_ compact: String, method: String, path: String, accessToken: String? = nil) async throws -> String {
        let proof = try DPoPProof(compact: compact)
        guard proof.htm == method else { throw GatehouseError.invalidDPoPProof("The DPoP proof's htm is not this request's method.") }
        guard Self.normalised(proof.htu) == base + path else {
            throw GatehouseError.invalidDPoPProof("The DPoP proof's htu is not this request's URL.")
        }
        let now = Int(clock.now().timeIntervalSince1970)
        let fresh = proof.nonce.map { isCurrent(nonce: $0, now: now) } ?? false
        if requireNonce, !fresh { throw GatehouseError.useDPoPNonce(self.nonce(now: now)) }
        guard fresh || abs(proof.iat - now) <= Self.skew else {
            throw GatehouseError.useDPoPNonce(
                self.nonce(now: now),
                detail:
                    "The DPoP proof's iat is more than \(Self.skew) seconds from the server's time: send it again with the nonce in DPoP-Nonce."
            )
        }
        if let accessToken {
            let hash = Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8)))
            guard let ath = proof.ath else { throw GatehouseError.invalidDPoPProof("The DPoP proof has no ath for the access token.") }
            guard Secrets.constantTimeEquals(ath, hash) else {
                throw GatehouseError.invalidDPoPProof("The DPoP proof's ath is not the hash of this access token.")
            }
        }
        // Scoped by key: a client cannot burn another's jti, and the record says nothing about who.
        let key = Secrets.sha256Hex(proof.thumbprint + "." + proof.jti)
        let until = clock.now().addingTimeInterval(Self.remembered)
        let first = try await persistence.transaction { try await $0.proofs.claim(key: key, until: until) }
        guard first else { throw GatehouseError.invalidDPoPProof("The DPoP proof was used before (its jti is not new).") }
        return proof.thumbprint
    }

    /// The nonce a proof must carry now: the five-minute bucket and a MAC of it under the server
    /// secret, so every node makes and accepts the same ones without sharing state.
    public func nonce(now: Int? = nil) -> String {
        let bucket = (now ?? Int(clock.now().timeIntervalSince1970)) / Self.nonceBucket
        return "\(bucket).\(secret.csrfToken(for: "dpop-nonce:\(bucket)"))"
    }

    private func isCurrent(nonce: String, now: Int) -> Bool {
        let parts = nonce.split(separator: ".", maxSplits: 1)
        let current = now / Self.nonceBucket
        guard parts.count == 2, let bucket = Int(parts[0]), bucket == current || bucket == current - 1 else { return false }
        return secret.csrfMatches(String(parts[1]), for: "dpop-nonce:\(bucket)")
    }

    /// RFC 9449 §4.3 and RFC 3986 §6: scheme and host in lower case, no default port, no query or
    /// fragment, the path as sent (at least `/`). Nil for what is not an absolute http(s) URL.
    static func normalised(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil
        else { return nil }
        var text = scheme + "://" + host
        if let port = components.port, !(scheme == "https" && port == 443), !(scheme == "http" && port == 80) {
            text += ":\(port)"
        }
        let path = components.percentEncodedPath
        return text + (path.isEmpty ? "/" : path)
    }
}
