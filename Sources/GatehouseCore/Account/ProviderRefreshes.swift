/// The provider-token refreshes under way on this node, by identity: concurrent reads of one expired
/// token share one call to the provider (a provider that rotates refresh tokens would refuse all but
/// the first). Across nodes they may still race; ``ProviderTokensFlow`` settles that in the database.
actor ProviderRefreshes {
    static let shared = ProviderRefreshes()

    private var running: [String: Task<ProviderGrant, any Error>] = [:]

    func run(_ identityID: String, _ work: @escaping @Sendable () async throws -> ProviderGrant) async throws -> ProviderGrant {
        if let task = running[identityID] { return try await task.value }
        let task = Task { try await work() }
        running[identityID] = task
        defer { running[identityID] = nil }
        return try await task.value
    }
}
