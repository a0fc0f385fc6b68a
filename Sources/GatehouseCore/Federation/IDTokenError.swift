import Foundation

/// Why a provider's token (ID token or access token) was refused; the flow answers them all alike (no oracle for attackers), the log and
/// the audit log keep the reason.
public enum IDTokenError: Error, Equatable, Sendable {
    case malformed, algorithm, unknownKey, signature, issuer, audience, expired, notYetValid, nonce, replayed
    case providerMisconfigured
    /// An access token whose app cannot be proved (X, a provider without introspection).
    case notProvable
    /// The provider says the access token is not valid (expired, revoked, unknown).
    case inactive
    /// The access token was issued to another app at the provider.
    case notIssuedToApp
    /// The provider refused the web flow's authorization code.
    case codeRefused
}
