import Foundation

/// The keys a client signs its request objects with: its registered `jwks`, or the JWK Set it
/// publishes at `jwks_uri`, fetched on first use and kept for an hour. A `kid` the cached set lacks
/// (the client rotated) triggers one refetch, at most once a minute per URI, and concurrent callers
/// share it, so made-up `kid`s cannot turn into a flood of fetches at the client's server. A refetch
/// that failed (the client's server down, or slower than the timeout) counts as that minute's too:
/// the cached set still answers, and a struggling server is not asked again by every request.
public actor ClientKeySets {
    struct Entry {
        var keys: ClientKeys
        var fetchedAt: Date
    }

    let fetcher: (any FederationHTTP)?
    private var entries: [String: Entry] = [:]
    private var inFlight: [String: Task<Entry, any Error>] = [:]
    /// When each URI was last asked for, whether or not the answer came.
    private var attempted: [String: Date] = [:]

    static let lifetime: TimeInterval = 3600
    static let refetchInterval: TimeInterval = 60

    public init(fetcher: (any FederationHTTP)?) { self.fetcher = fetcher }

    /// The client's key for `kid` and `algorithm`; nil when it has none (or its set cannot be fetched).
    func key(of client: ClientRecord, kid: String?, algorithm: SigningAlgorithm, now: Date) async -> ClientKeys.Key? {
        if let jwks = client.settings.jwks { return (try? ClientKeys(json: jwks))?.key(kid: kid, algorithm: algorithm) }
        guard let uri = client.settings.jwksURI, fetcher != nil else { return nil }
        if let entry = entries[uri], now.timeIntervalSince(entry.fetchedAt) < Self.lifetime,
            let key = entry.keys.key(kid: kid, algorithm: algorithm)
        {
            return key
        }
        if let entry = entries[uri],
            now.timeIntervalSince(max(entry.fetchedAt, attempted[uri] ?? entry.fetchedAt)) < Self.refetchInterval
        {
            return entry.keys.key(kid: kid, algorithm: algorithm)
        }
        return (try? await refreshed(uri, now: now))?.keys.key(kid: kid, algorithm: algorithm)
    }

    private func refreshed(_ uri: String, now: Date) async throws -> Entry {
        if let running = inFlight[uri] { return try await running.value }
        guard let fetcher else { throw ProviderCallError.malformed("no outbound HTTP") }
        let task = Task { Entry(keys: try ClientKeys(json: String(decoding: try await fetcher.get(uri), as: UTF8.self)), fetchedAt: now) }
        inFlight[uri] = task
        attempted[uri] = now
        defer { inFlight[uri] = nil }
        let entry = try await task.value
        entries[uri] = entry
        return entry
    }
}
