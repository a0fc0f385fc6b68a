import Foundation

/// A social identity provider the operator configured (`GATEHOUSE_SOCIAL_FILE`): whose ID tokens are
/// accepted, for which of the operator's app ids at that provider, checked against which keys.
public struct SocialProvider: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case apple, google, oidc
    }

    /// The name apps and clients use (`apple`, `google`, `acme-sso`).
    public var id: String
    public var kind: Kind
    /// `iss` values accepted (Google signs with two spellings of one issuer).
    public var issuers: [String]
    /// Where the provider publishes its keys; nil: discovered from the issuer's
    /// `/.well-known/openid-configuration`.
    public var jwksURI: String?
    /// The operator's app ids at the provider (`aud`): iOS, Android and web ids of one app may differ.
    public var clientIDs: [String]

    public init(id: String, kind: Kind, issuers: [String], jwksURI: String?, clientIDs: [String]) {
        self.id = id
        self.kind = kind
        self.issuers = issuers
        self.jwksURI = jwksURI
        self.clientIDs = clientIDs
    }

    /// Apple's and Google's published endpoints; `issuer` and `jwksURI` override them (tests point
    /// them at local servers).
    public static func preset(_ kind: Kind, id: String, clientIDs: [String], issuer: String?, jwksURI: String?) -> SocialProvider {
        switch kind {
        case .apple:
            return SocialProvider(
                id: id, kind: kind, issuers: [issuer ?? "https://appleid.apple.com"],
                jwksURI: jwksURI ?? (issuer == nil ? "https://appleid.apple.com/auth/keys" : nil), clientIDs: clientIDs)
        case .google:
            return SocialProvider(
                id: id, kind: kind, issuers: issuer.map { [$0] } ?? ["https://accounts.google.com", "accounts.google.com"],
                jwksURI: jwksURI ?? (issuer == nil ? "https://www.googleapis.com/oauth2/v3/certs" : nil), clientIDs: clientIDs)
        case .oidc:
            return SocialProvider(id: id, kind: kind, issuers: issuer.map { [$0] } ?? [], jwksURI: jwksURI, clientIDs: clientIDs)
        }
    }

    public static func isValidID(_ id: String) -> Bool {
        (1...40).contains(id.count) && id.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
    }
}

/// The configured providers, and the one verifier that checks their tokens.
public struct SocialFederation: Sendable {
    public let providers: [String: SocialProvider]
    let verifier: IDTokenVerifier?

    public init(providers: [SocialProvider] = [], fetcher: (any FederationHTTP)? = nil) {
        self.providers = Dictionary(providers.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.verifier = fetcher.map { IDTokenVerifier(cache: JWKSCache(fetcher: $0)) }
    }
}
