import Foundation
import JWTKit

/// Each provider's published keys, fetched on first use and kept for an hour. A token signed with a
/// key not in the cache triggers one refetch (providers rotate keys), at most once a minute per
/// provider, and concurrent callers share one fetch, so a flood of made-up `kid`s cannot turn into a
/// flood of fetches. A refetch that failed (the provider down, or slower than the client's timeout)
/// counts as that minute's refetch too: the cached keys still answer, and the provider is not asked
/// again by every sign-in while it struggles.
actor JWKSCache {
    struct Entry {
        var keys: JWTKeyCollection
        /// kid → the key's type (`RSA`, `EC`), to refuse a token whose `alg` does not fit its key.
        var types: [String: String]
        var fetchedAt: Date
    }

    let fetcher: any FederationHTTP
    private var entries: [String: Entry] = [:]
    private var discovered: [String: Discovery] = [:]
    /// A fetch under way per provider: callers arriving meanwhile (the actor is reentrant across the
    /// network wait) share it instead of starting their own.
    private var inFlight: [String: Task<Entry, any Error>] = [:]
    /// When each provider's keys were last asked for, whether or not the answer came.
    private var attempted: [String: Date] = [:]

    static let lifetime: TimeInterval = 3600
    static let refetchInterval: TimeInterval = 60

    init(fetcher: any FederationHTTP) { self.fetcher = fetcher }

    /// The keys that hold `kid`, refreshed when it is unknown and the last fetch is old enough. A
    /// token without `kid` is taken only from a provider that publishes exactly one key (JWTKit would
    /// otherwise pick its default key for it).
    func keys(for provider: SocialProvider, kid: String?, now: Date) async throws -> (JWTKeyCollection, keyType: String)? {
        func lookup(_ entry: Entry) -> (JWTKeyCollection, keyType: String)? {
            if let kid { return entry.types[kid].map { (entry.keys, $0) } }
            return entry.types.count == 1 ? entry.types.first.map { (entry.keys, $0.value) } : nil
        }
        if let entry = entries[provider.id], now.timeIntervalSince(entry.fetchedAt) < Self.lifetime, let found = lookup(entry) {
            return found
        }
        if let entry = entries[provider.id],
            now.timeIntervalSince(max(entry.fetchedAt, attempted[provider.id] ?? entry.fetchedAt)) < Self.refetchInterval
        {
            return lookup(entry)
        }
        return lookup(try await refreshed(provider, now: now))
    }

    private func refreshed(_ provider: SocialProvider, now: Date) async throws -> Entry {
        if let running = inFlight[provider.id] { return try await running.value }
        let task = Task { try await self.fetch(provider, now: now) }
        inFlight[provider.id] = task
        attempted[provider.id] = now
        defer { inFlight[provider.id] = nil }
        let entry = try await task.value
        entries[provider.id] = entry
        return entry
    }

    private func fetch(_ provider: SocialProvider, now: Date) async throws -> Entry {
        let uri = try await jwksURI(provider)
        let data = try await fetcher.get(uri)
        let jwks = try JSONDecoder().decode(JWKS.self, from: data)
        let keys = JWTKeyCollection()
        var types: [String: String] = [:]
        for jwk in jwks.keys {
            guard let kid = jwk.keyIdentifier?.string else { continue }
            // Keys of types or curves JWTKit does not take are skipped, not fatal: providers publish
            // several kinds.
            do {
                try await keys.add(jwk: jwk)
                types[kid] = jwk.keyType.rawValue
            } catch {
                continue
            }
        }
        return Entry(keys: keys, types: types, fetchedAt: now)
    }

    private func jwksURI(_ provider: SocialProvider) async throws -> String {
        if let uri = provider.jwksURI { return uri }
        guard let uri = try await discovery(provider).jwks_uri else { throw IDTokenError.providerMisconfigured }
        return uri
    }

    /// What an OpenID provider publishes about itself (OpenID Connect Discovery §3), fetched once.
    struct Discovery: Decodable, Sendable {
        var jwks_uri: String?
        var authorization_endpoint: String?
        var token_endpoint: String?
        var userinfo_endpoint: String?
    }

    func discovery(_ provider: SocialProvider) async throws -> Discovery {
        if let known = discovered[provider.id] { return known }
        guard let issuer = provider.issuers.first else { throw IDTokenError.providerMisconfigured }
        let data = try await fetcher.get(issuer.trimmingSuffix("/") + "/.well-known/openid-configuration")
        let document = try JSONDecoder().decode(Discovery.self, from: data)
        discovered[provider.id] = document
        return document
    }

    /// The provider's endpoints for the web flow: configured ones first, discovered ones for the rest.
    func endpoints(_ provider: SocialProvider) async throws -> SocialProvider.Endpoints {
        let configured = provider.endpoints
        guard configured.authorization == nil || configured.token == nil, provider.issuesIDTokens else { return configured }
        let found = try await discovery(provider)
        return SocialProvider.Endpoints(
            authorization: found.authorization_endpoint, token: found.token_endpoint, userinfo: found.userinfo_endpoint
        ).overridden(by: configured)
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}
