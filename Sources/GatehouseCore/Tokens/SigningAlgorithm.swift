import Foundation

/// The algorithms Gatehouse signs tokens with; each has its own current key.
public enum SigningAlgorithm: String, Sendable, CaseIterable, Codable, Hashable {
    /// OpenID Connect Core §15.1 makes RS256 mandatory for a provider and many relying parties know
    /// nothing else, so ID tokens use it unless a client asks for ES256.
    case rs256 = "RS256"
    /// About fifty times cheaper to sign than RS256 and a third of the size: access tokens use it
    /// unless a client asks for RS256.
    case es256 = "ES256"

    /// Parses a client setting or a JWS header's `alg`, exactly (no `none`, no HMAC).
    public init?(name: String) { self.init(rawValue: name) }
}
