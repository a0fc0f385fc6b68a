import Foundation

extension ProviderGrant {
    /// What a token endpoint answered at `now`; nil without an access token. What the answer leaves
    /// out is kept from `previous`: the refresh token (Google sends one at the first consent only; a
    /// provider that does not rotate answers a refresh without one), and the scope and token type
    /// (RFC 6749 §5.1: an omitted scope is the one granted before).
    init?(_ tokens: ProviderAPI.Tokens, now: Date, previous: ProviderGrant? = nil) {
        guard let access = tokens.accessToken else { return nil }
        self.init(
            accessToken: access, refreshToken: tokens.refreshToken ?? previous?.refreshToken,
            expiresAt: tokens.expiresIn.map { now.addingTimeInterval($0) }, scope: tokens.scope ?? previous?.scope,
            tokenType: tokens.tokenType ?? previous?.tokenType)
    }
}
