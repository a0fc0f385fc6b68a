import Foundation

extension ProviderGrant {
    /// What a token endpoint answered at `now`; nil without an access token. `previous` is the refresh
    /// token to keep when the answer brings none (Google sends one at the first consent only; a
    /// provider that does not rotate answers a refresh without one).
    init?(_ tokens: ProviderAPI.Tokens, now: Date, previousRefreshToken previous: String? = nil) {
        guard let access = tokens.accessToken else { return nil }
        self.init(
            accessToken: access, refreshToken: tokens.refreshToken ?? previous,
            expiresAt: tokens.expiresIn.map { now.addingTimeInterval($0) }, scope: tokens.scope, tokenType: tokens.tokenType)
    }
}
