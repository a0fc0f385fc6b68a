/// A stable, machine-readable error code shared verbatim by the server and the SDK.
///
/// An open struct rather than an enum, so that an app built against an older SDK keeps working
/// when a newer server answers with a code it has never seen.
public struct ErrorCode: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}

extension ErrorCode {
    // Request shape
    public static let invalidRequest: ErrorCode = "invalid_request"
    public static let malformedBody: ErrorCode = "malformed_body"
    public static let payloadTooLarge: ErrorCode = "payload_too_large"
    /// 431: the request's header fields are too large (over 80 KiB together, or one over 80 KiB).
    public static let headersTooLarge: ErrorCode = "headers_too_large"
    public static let unsupportedMediaType: ErrorCode = "unsupported_media_type"
    public static let validationFailed: ErrorCode = "validation_failed"
    public static let notFound: ErrorCode = "not_found"
    public static let methodNotAllowed: ErrorCode = "method_not_allowed"
    // Authentication
    public static let invalidCredentials: ErrorCode = "invalid_credentials"
    public static let emailNotVerified: ErrorCode = "email_not_verified"
    public static let accountDisabled: ErrorCode = "account_disabled"
    public static let unauthorized: ErrorCode = "unauthorized"
    /// 403: the caller may not use this route at all (an operator route from outside).
    public static let forbidden: ErrorCode = "forbidden"
    public static let invalidToken: ErrorCode = "invalid_token"
    public static let sessionRevoked: ErrorCode = "session_revoked"
    public static let invalidClient: ErrorCode = "invalid_client"
    public static let flowExpired: ErrorCode = "flow_expired"
    public static let csrfFailed: ErrorCode = "csrf_failed"
    // Accounts
    public static let alreadyRegistered: ErrorCode = "already_registered"
    // Codes
    public static let invalidCode: ErrorCode = "invalid_code"
    public static let codeExpired: ErrorCode = "code_expired"
    public static let notEnabled: ErrorCode = "not_enabled"
    // Device authenticators
    /// The signature over a device challenge is wrong (a wrong PIN); the problem carries the counts.
    public static let invalidAuthenticatorResponse: ErrorCode = "invalid_authenticator_response"
    /// The authenticator is not (or no longer) registered: after the maximum failures, deleted by the
    /// user, or never known. The device must register again.
    public static let deviceDeregistered: ErrorCode = "device_deregistered"
    /// The challenge was used, expired or never issued.
    public static let challengeExpired: ErrorCode = "challenge_expired"
    public static let authenticatorExists: ErrorCode = "authenticator_exists"
    // Passkeys
    /// A passkey's response failed one of WebAuthn's checks (its origin, challenge, RP ID, flags,
    /// attestation or encoding); the problem's detail names which.
    public static let invalidPasskey: ErrorCode = "invalid_passkey"
    /// A social provider's token was refused: bad signature, issuer, audience, lifetime or nonce, or a
    /// nonce already used. Get a fresh token (and nonce) from the provider's SDK.
    public static let invalidProviderToken: ErrorCode = "invalid_provider_token"
    /// The provider's email belongs to an existing account, and either side has not proved it: sign in
    /// to that account first, then link the provider (no silent takeover).
    public static let identityLinkRequired: ErrorCode = "identity_link_required"
    /// Linking a provider identity that already belongs to another account.
    public static let identityInUse: ErrorCode = "identity_in_use"
    /// Gatehouse keeps no usable provider token for the identity: the provider does not keep tokens,
    /// the identity signed in before it did, or the provider refused the refresh. Sign in with the
    /// provider again (in the browser) to give Gatehouse a new one.
    public static let providerTokenUnavailable: ErrorCode = "provider_token_unavailable"
    /// Unlinking would leave the account with no way to sign in: set a password or link another
    /// provider first.
    public static let lastSignInMethod: ErrorCode = "last_sign_in_method"
    /// Upgrading an account that is not anonymous (it already has a way to sign in).
    public static let notAnonymous: ErrorCode = "not_anonymous"
    /// Adding a way to sign in (linking a provider) needs a recent sign-in: sign in again, then retry.
    public static let reauthenticationRequired: ErrorCode = "reauthentication_required"
    /// The first factor was right, but the client or the user requires a second: no session started.
    /// The problem's `flow_id` names the sign-in waiting for it, `factors` the factors that complete it.
    public static let mfaRequired: ErrorCode = "mfa_required"
    /// The person cancelled at the provider, or the provider refused the request (web sign-in).
    public static let accessDenied: ErrorCode = "access_denied"
    // OAuth 2.0 token endpoint (RFC 6749 §5.2), as the OAuth error bodies spell them
    public static let invalidGrant: ErrorCode = "invalid_grant"
    public static let invalidScope: ErrorCode = "invalid_scope"
    /// RFC 9101 §6.3: a request object (pushed or at the authorization endpoint) that does not verify.
    public static let invalidRequestObject: ErrorCode = "invalid_request_object"
    /// RFC 7591 §3.2.2: dynamic registration refused a redirect URI.
    public static let invalidRedirectURI: ErrorCode = "invalid_redirect_uri"
    /// RFC 7591 §3.2.2: dynamic registration refused other metadata.
    public static let invalidClientMetadata: ErrorCode = "invalid_client_metadata"
    /// RFC 8707 §2: the `resource` is not one this client's tokens may be for.
    public static let invalidTarget: ErrorCode = "invalid_target"
    public static let unsupportedGrantType: ErrorCode = "unsupported_grant_type"
    /// RFC 9449 §5 and §7.1: a DPoP proof that is missing where it is required, malformed, replayed,
    /// or for another key, method, URL or token.
    public static let invalidDPoPProof: ErrorCode = "invalid_dpop_proof"
    /// RFC 9449 §8: the server wants a fresh `nonce` in the DPoP proof; the answer's `DPoP-Nonce`
    /// header holds it. Retry once with it.
    public static let useDPoPNonce: ErrorCode = "use_dpop_nonce"
    /// RFC 8628 §3.5, polling the device grant: the person has not approved yet (poll again after the interval).
    public static let authorizationPending: ErrorCode = "authorization_pending"
    /// RFC 8628 §3.5: polled faster than the interval; it grew by five seconds.
    public static let slowDown: ErrorCode = "slow_down"
    /// RFC 8628 §3.5: the device code expired before it was approved: start again.
    public static let expiredToken: ErrorCode = "expired_token"
    public static let unauthorizedClient: ErrorCode = "unauthorized_client"
    /// RFC 6749 §5.2's spelling of ``internalError`` on the `/oauth` endpoints.
    public static let serverError: ErrorCode = "server_error"
    /// RFC 6749 §5.2's spelling of ``serverBusy`` on the `/oauth` endpoints.
    public static let temporarilyUnavailable: ErrorCode = "temporarily_unavailable"
    // Capacity
    public static let rateLimited: ErrorCode = "rate_limited"
    public static let serverBusy: ErrorCode = "server_busy"
    /// The operator's hook for this step did not answer, or answered badly, and it is set to refuse
    /// then (`Retry-After` is sent); retrying later may succeed.
    public static let hookFailed: ErrorCode = "hook_failed"
    /// The client asks for a bot challenge (Turnstile, hCaptcha, reCAPTCHA) before this request and
    /// none was sent: the app passes the widget's token (the SDK's `AuthClient.Configuration.botChallenge`).
    public static let botChallengeRequired: ErrorCode = "bot_challenge_required"
    /// The bot challenge's token was refused by its service, or was used before.
    public static let botChallengeFailed: ErrorCode = "bot_challenge_failed"
    public static let internalError: ErrorCode = "internal_error"
}

/// Field-level error codes carried in ``FieldError/code``.
extension ErrorCode {
    public static let required: ErrorCode = "required"
    public static let tooShort: ErrorCode = "too_short"
    public static let tooLong: ErrorCode = "too_long"
    public static let invalidFormat: ErrorCode = "invalid_format"
    public static let invalidType: ErrorCode = "invalid_type"
    public static let sameAsEmail: ErrorCode = "same_as_email"
    /// A new password that is on the common-passwords list (or is one with digits or symbols added).
    public static let commonPassword: ErrorCode = "common_password"
    /// A new password that contains the user's email address or the app's name.
    public static let containsPersonalData: ErrorCode = "contains_personal_data"
    /// A new password found in known breaches by the password range service the server asks.
    public static let breachedPassword: ErrorCode = "breached_password"
    public static let invalidValue: ErrorCode = "invalid_value"
}

extension ErrorCode {
    /// Every code the server sends — as `Problem.code`, `FieldError.code` or an OAuth `error` — and no
    /// other. The server's error renderers check each answer against it (in debug builds) and a test
    /// checks that each one is sent by some server code path, so the SDK's constants, the server and
    /// the OpenAPI document cannot drift apart. Codes the SDK makes up for failures before an answer
    /// (`network_error`, `invalid_response`, `not_signed_in`) are not in it.
    public static let serverCodes: [ErrorCode] = [
        .invalidRequest, .malformedBody, .payloadTooLarge, .headersTooLarge, .unsupportedMediaType, .validationFailed,
        .notFound, .methodNotAllowed,
        .invalidCredentials, .emailNotVerified, .accountDisabled, .unauthorized, .forbidden, .invalidToken,
        .sessionRevoked, .invalidClient, .flowExpired, .csrfFailed,
        .alreadyRegistered,
        .invalidCode, .codeExpired, .notEnabled,
        .invalidAuthenticatorResponse, .deviceDeregistered, .challengeExpired, .authenticatorExists, .invalidPasskey,
        .invalidProviderToken, .identityLinkRequired, .identityInUse, .lastSignInMethod, .reauthenticationRequired, .mfaRequired,
        .notAnonymous, .providerTokenUnavailable, .accessDenied,
        .invalidGrant, .invalidScope, .invalidRequestObject, .invalidRedirectURI, .invalidClientMetadata, .invalidTarget,
        .unsupportedGrantType, .unauthorizedClient, .serverError, .invalidDPoPProof, .useDPoPNonce, .authorizationPending, .slowDown,
        .expiredToken,
        .temporarilyUnavailable,
        .rateLimited, .serverBusy, .hookFailed, .internalError, .botChallengeRequired, .botChallengeFailed,
        .required, .tooShort, .tooLong, .invalidFormat, .invalidType, .sameAsEmail, .invalidValue,
        .commonPassword, .containsPersonalData, .breachedPassword,
    ]
}
