import Foundation

/// The configured providers, and the verifiers that check their tokens.
public struct SocialFederation: Sendable {
    public let providers: [String: SocialProvider]
    let verifier: IDTokenVerifier?
    /// The server's outbound HTTP (https only, bounded), also for fetches that are not a provider's.
    public let http: (any FederationHTTP)?

    public init(providers: [SocialProvider] = [], fetcher: (any FederationHTTP)? = nil) {
        self.providers = Dictionary(providers.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        self.verifier = fetcher.map { IDTokenVerifier(cache: JWKSCache(fetcher: $0)) }
        self.http = fetcher
    }
}
