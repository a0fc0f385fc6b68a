import GatehouseAPI

extension GatehouseError {
    /// Nothing to hand out: the provider does not keep tokens (or this client does not offer it), the
    /// identity has none, or the provider refused to refresh them.
    public static let providerTokenUnavailable = GatehouseError(
        .conflict, code: .providerTokenUnavailable, title: "No provider token",
        detail: "Gatehouse keeps no usable token of this provider for the identity. Sign in with the provider again.")

    /// The provider's token endpoint could not be reached, or answered out of its contract, while
    /// refreshing its token: its outage, retry later.
    public static let providerRefreshUnavailable = GatehouseError(
        .unavailable, code: .temporarilyUnavailable, title: "Provider unavailable",
        detail: "The provider cannot refresh its token right now. Try again shortly.", retryAfter: 30)
}
