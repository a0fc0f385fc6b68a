import Foundation
import GatehouseAPI

/// The one error type the core raises. It says *what* went wrong — a stable ``ErrorCode``, a title, a
/// detail for people, field errors — and never *how* to say it over HTTP: each route group's renderer
/// picks the status and the shape (problem JSON, OAuth JSON, a redirect, a page) from ``category``.
/// The internal `cause` is for the log only.
///
/// A struct over an internal enum, so new errors can be added without breaking callers that switch on
/// ``Category``; each area's errors beyond the common ones live in an extension file of their own
/// (`GatehouseError+Devices.swift`, `GatehouseError+ProviderTokens.swift`).
public struct GatehouseError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is, for renderers to map onto their transport.
    public enum Category: Sendable, Hashable {
        /// The request is malformed (shape, missing parameter).
        case badRequest
        /// Fields failed their rules; ``fieldErrors`` names them.
        case validation
        /// Who is calling could not be established or was refused (bad password, token, code).
        case unauthenticated
        /// The caller is known but may not do this (unverified email, disabled account, method off).
        case forbidden
        case notFound
        /// It existed and is no more (a finished or expired flow).
        case gone
        case methodNotAllowed
        /// The target already exists.
        case conflict
        case payloadTooLarge
        case unsupportedMediaType
        /// Too many attempts; ``retryAfter`` says when to come back.
        case rateLimited
        /// The server is at capacity; ``retryAfter`` says when to come back.
        case unavailable
        /// An OAuth 2.0 token-endpoint refusal (RFC 6749 §5.2): `invalid_grant`, `invalid_scope`, …
        case oauth
        /// The calling client failed to authenticate (RFC 6749 §5.2 `invalid_client`).
        case clientAuthentication
        case internalFailure
    }

    /// Internal (not private) so that errors of one area can live in an extension file of their own.
    enum Kind: Sendable, Hashable {
        case badRequest, validation, unauthenticated, forbidden, notFound, gone, methodNotAllowed, conflict
        case payloadTooLarge, unsupportedMediaType, rateLimited, unavailable, oauth, clientAuthentication, internalFailure
    }

    let kind: Kind
    public let code: ErrorCode
    public var title: String
    public var detail: String?
    public var fieldErrors: [FieldError]
    /// Seconds, for rate limits and capacity refusals.
    public var retryAfter: Int?
    public var remainingAttempts: Int?
    /// A device authenticator's counts, for a wrong signature and a deregistration.
    public var failureCounts: FailureCounts?
    /// The sign-in waiting for a second factor, and the factors that may complete it (`mfa_required`).
    public var pendingFlow: PendingFactor?
    /// A fresh nonce for DPoP proofs (RFC 9449 §8), sent as `DPoP-Nonce`.
    public var dpopNonce: String?
    /// The refusal concerns a DPoP-bound token or proof at a protected route: the challenge is
    /// `WWW-Authenticate: DPoP …` (RFC 9449 §7.1), not `Bearer`.
    public var dpopChallenge = false
    public var cause: (any Error)?

    init(
        _ kind: Kind, code: ErrorCode, title: String, detail: String?, fieldErrors: [FieldError] = [],
        retryAfter: Int? = nil, remainingAttempts: Int? = nil, cause: (any Error)? = nil
    ) {
        self.kind = kind
        self.code = code
        self.title = title
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.retryAfter = retryAfter
        self.remainingAttempts = remainingAttempts
        self.cause = cause
    }

    public var category: Category {
        switch kind {
        case .badRequest: .badRequest
        case .validation: .validation
        case .unauthenticated: .unauthenticated
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .gone: .gone
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .payloadTooLarge: .payloadTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .rateLimited: .rateLimited
        case .unavailable: .unavailable
        case .oauth: .oauth
        case .clientAuthentication: .clientAuthentication
        case .internalFailure: .internalFailure
        }
    }

    public var description: String { "\(code): \(detail ?? title)" }

    /// The same error with an internal cause attached (logged, never shown).
    public func causedBy(_ cause: any Error) -> GatehouseError {
        var copy = self
        copy.cause = cause
        return copy
    }
}

// MARK: - Request shape

extension GatehouseError {
    public static func validation(_ result: ValidationResult) -> GatehouseError {
        GatehouseError(
            .validation, code: .validationFailed, title: "Validation failed",
            detail: "One or more fields are invalid.", fieldErrors: result.errors)
    }

    public static func validation(field: String?, code: ErrorCode, message: String) -> GatehouseError {
        var result = ValidationResult()
        if let field {
            result.invalidate(field: field, code: code, message: message)
        } else {
            result.invalidate(code: code, message: message)
        }
        return .validation(result)
    }

    public static func badRequest(_ detail: String, code: ErrorCode = .invalidRequest) -> GatehouseError {
        GatehouseError(.badRequest, code: code, title: "Bad request", detail: detail)
    }

    public static func unsupportedMediaType(_ detail: String) -> GatehouseError {
        GatehouseError(.unsupportedMediaType, code: .unsupportedMediaType, title: "Unsupported media type", detail: detail)
    }

    public static let payloadTooLarge = GatehouseError(
        .payloadTooLarge, code: .payloadTooLarge, title: "Payload too large", detail: "Bodies are limited to 1 MiB.")

    public static func notFound(_ detail: String) -> GatehouseError {
        GatehouseError(.notFound, code: .notFound, title: "Not found", detail: detail)
    }

    public static let methodNotAllowed = GatehouseError(
        .methodNotAllowed, code: .methodNotAllowed, title: "Method not allowed", detail: "This route does not take that method.")

    /// Something failed on our side; `cause` goes to the log.
    public static func internalFailure(cause: (any Error)? = nil) -> GatehouseError {
        GatehouseError(
            .internalFailure, code: .internalError, title: "Internal error", detail: "Something went wrong on our side.",
            cause: cause)
    }

    /// The storage failed (a full disk, a read-only database, a lost connection): nothing was written,
    /// and the same request later may succeed. `cause` goes to the log.
    public static func storageUnavailable(cause: (any Error)? = nil) -> GatehouseError {
        GatehouseError(
            .unavailable, code: .temporarilyUnavailable, title: "Storage unavailable",
            detail: "The server cannot reach its storage right now; nothing was changed. Try again shortly.", retryAfter: 5,
            cause: cause)
    }

    /// The database or another dependency is not ready.
    public static func notReady(_ detail: String) -> GatehouseError {
        GatehouseError(.unavailable, code: .serverBusy, title: "Not ready", detail: detail, retryAfter: 5)
    }
}

// MARK: - Authentication and accounts

extension GatehouseError {
    public static let invalidCredentials = GatehouseError(
        .unauthenticated, code: .invalidCredentials, title: "Invalid credentials",
        detail: "The email or password is wrong.")

    public static let emailNotVerified = GatehouseError(
        .forbidden, code: .emailNotVerified, title: "Email not verified",
        detail: "Verify the email address before signing in.")

    public static let accountDisabled = GatehouseError(
        .forbidden, code: .accountDisabled, title: "Account disabled", detail: "This account is disabled.")

    public static let alreadyRegistered = GatehouseError(
        .conflict, code: .alreadyRegistered, title: "Already registered",
        detail: "An account with this email already exists.")
    /// An anonymous account's upgrade names an address another account has: the app signs in to that
    /// one instead.
    public static let upgradeAddressTaken = GatehouseError(
        .conflict, code: .alreadyRegistered, title: "Already registered",
        detail: "Another account has this address. Sign in to that account instead; this anonymous account stays as it is.")
    public static let notAnonymous = GatehouseError(
        .conflict, code: .notAnonymous, title: "Not anonymous", detail: "This account is not anonymous: there is nothing to upgrade.")

    public static func unauthorized(_ detail: String, code: ErrorCode = .invalidToken) -> GatehouseError {
        GatehouseError(.unauthenticated, code: code, title: "Unauthorized", detail: detail)
    }

    /// A one-time code or link that is gone (used, expired, never issued).
    public static let codeExpired = GatehouseError(
        .unauthenticated, code: .codeExpired, title: "Code expired",
        detail: "This code or link is no longer valid. Ask for a new one.")

    public static func invalidCode(remaining: Int) -> GatehouseError {
        GatehouseError(
            .unauthenticated, code: .invalidCode, title: "Invalid code", detail: "The code is wrong.",
            remainingAttempts: remaining)
    }

    /// A persisted flow that is finished, expired or unknown: start again.
    public static let flowExpired = GatehouseError(
        .gone, code: .flowExpired, title: "Flow expired", detail: "This sign-in has expired or was already completed. Start again.")

    /// A form came back without the CSRF token its flow issued.
    public static let csrfMismatch = GatehouseError(
        .forbidden, code: .csrfFailed, title: "Form expired", detail: "The form is out of date. Load it again.")

    /// The client does not offer this method at all (`methods` lacks it): refused.
    public static func methodNotEnabled(_ detail: String) -> GatehouseError {
        GatehouseError(.forbidden, code: .notEnabled, title: "Not enabled", detail: detail)
    }

    /// A social provider's token that failed a check; the reason stays in the log.
    public static let invalidProviderToken = GatehouseError(
        .unauthenticated, code: .invalidProviderToken, title: "Invalid provider token",
        detail: "The provider's token was refused. Sign in with the provider again.")

    /// The provider's keys could not be fetched: its outage (or a misconfiguration), retry later.
    public static let providerUnavailable = GatehouseError(
        .unavailable, code: .temporarilyUnavailable, title: "Provider unavailable",
        detail: "The sign-in provider's keys cannot be fetched right now. Try again shortly.", retryAfter: 30)

    /// A bot challenge (``BotChallenge``): none sent, refused or replayed, or its service unreachable.
    public static let botChallengeRequired = GatehouseError(
        .badRequest, code: .botChallengeRequired, title: "Bot challenge required",
        detail: "This app asks for a bot challenge before this request. Send the widget's token in Gatehouse-Bot-Challenge.")

    public static let botChallengeFailed = GatehouseError(
        .forbidden, code: .botChallengeFailed, title: "Bot challenge failed",
        detail: "The bot challenge's token was refused or was already used. Solve the challenge again.")

    public static let botChallengeUnavailable = GatehouseError(
        .unavailable, code: .temporarilyUnavailable, title: "Bot challenge unavailable",
        detail: "The bot challenge cannot be checked right now. Try again shortly.", retryAfter: 30)

    public static let providerNotEnabled = GatehouseError(
        .forbidden, code: .notEnabled, title: "Not enabled", detail: "This client does not offer sign-in with this provider.")

    public static let identityLinkRequired = GatehouseError(
        .conflict, code: .identityLinkRequired, title: "Sign in to link",
        detail: "An account with this email exists. Sign in to it first, then link this provider.")

    public static let identityInUse = GatehouseError(
        .conflict, code: .identityInUse, title: "Identity in use",
        detail: "This provider account is linked to another account. Unlink it there first.")

    public static let reauthenticationRequired = GatehouseError(
        .forbidden, code: .reauthenticationRequired, title: "Sign in again",
        detail: "Adding a way to sign in needs a recent sign-in. Sign in again, then retry.")

    /// The first factor was right; no session started until a second completes the pending flow
    /// (after enrolling one, when the user has none).
    public static func mfaRequired(_ pending: PendingFactor) -> GatehouseError {
        var error = GatehouseError(
            .forbidden, code: .mfaRequired, title: "Second factor required",
            detail: pending.enrol
                ? "This sign-in needs a second factor and the account has none: enrol one of the listed factors in the flow."
                : "This sign-in needs a second factor. Complete the flow with one of the listed factors.")
        error.pendingFlow = pending
        return error
    }

    public static let lastSignInMethod = GatehouseError(
        .conflict, code: .lastSignInMethod, title: "Last sign-in method",
        detail: "This is the account's only way to sign in. Set a password or link another provider first.")

    public static func forbidden(_ detail: String) -> GatehouseError {
        GatehouseError(.forbidden, code: .forbidden, title: "Forbidden", detail: detail)
    }

    /// The client does not offer this endpoint: as if it did not exist.
    public static func featureNotEnabled(_ detail: String) -> GatehouseError {
        GatehouseError(.notFound, code: .notEnabled, title: "Not enabled", detail: detail)
    }

    /// An unknown `client_id` named by a public API call.
    public static func invalidClient(_ detail: String) -> GatehouseError {
        GatehouseError(.badRequest, code: .invalidClient, title: "Invalid client", detail: detail)
    }
}

// MARK: - Capacity

extension GatehouseError {
    public static func rateLimited(retryAfter: Int) -> GatehouseError {
        GatehouseError(
            .rateLimited, code: .rateLimited, title: "Too many requests",
            detail: "Too many attempts. Try again later.", retryAfter: max(1, retryAfter))
    }

    /// An operator's before-hook failed and is set to fail closed.
    public static let hookFailed = GatehouseError(
        .unavailable, code: .hookFailed, title: "Hook failed",
        detail: "A check this service depends on did not answer. Try again shortly.", retryAfter: 5)

    public static func busy(retryAfter: Int) -> GatehouseError {
        GatehouseError(
            .unavailable, code: .serverBusy, title: "Server busy",
            detail: "The server is at capacity. Try again shortly.", retryAfter: max(1, retryAfter))
    }
}

// MARK: - OAuth 2.0 (RFC 6749 §5.2)

extension GatehouseError {
    public static func invalidGrant(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .invalidGrant, title: "Invalid grant", detail: detail)
    }

    public static func invalidTarget(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .invalidTarget, title: "Invalid target", detail: detail)
    }

    /// RFC 9101 §6.3 / RFC 9126 §2.3: a request object that does not verify or says what it may not.
    public static func invalidRequestObject(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .invalidRequestObject, title: "Invalid request object", detail: detail)
    }

    /// RFC 7591 §3.2.2: a registration's redirect URIs cannot be honoured.
    public static func invalidRedirectURI(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .invalidRedirectURI, title: "Invalid redirect URI", detail: detail)
    }

    /// RFC 7591 §3.2.2: a registration's metadata cannot be honoured.
    public static func invalidClientMetadata(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .invalidClientMetadata, title: "Invalid client metadata", detail: detail)
    }

    public static func invalidScope(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .invalidScope, title: "Invalid scope", detail: detail)
    }

    public static func unsupportedGrantType(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .unsupportedGrantType, title: "Unsupported grant type", detail: detail)
    }

    /// RFC 9449: a DPoP proof that does not hold, or none where the client or the token needs one.
    /// 400 where tokens are issued; ``atProtectedRoute`` makes it the 401 of a protected route.
    public static func invalidDPoPProof(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .invalidDPoPProof, title: "Invalid DPoP proof", detail: detail)
    }

    /// RFC 8628 §3.5: a device's poll answered with `authorization_pending`, `slow_down`,
    /// `access_denied` or `expired_token` (400, as every token-endpoint refusal).
    public static func deviceFlow(_ code: ErrorCode, _ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: code, title: "Device authorization", detail: detail)
    }

    /// RFC 9449 §8: the proof must carry the server's current nonce, which this answer brings.
    public static func useDPoPNonce(
        _ nonce: String, detail: String = "Send the proof again with the nonce in DPoP-Nonce."
    ) -> GatehouseError {
        var error = GatehouseError(.oauth, code: .useDPoPNonce, title: "DPoP nonce required", detail: detail)
        error.dpopNonce = nonce
        return error
    }

    /// A DPoP-bound access token presented without its proof (as a bearer token, or in a form body).
    public static func dpopBoundToken(_ detail: String) -> GatehouseError {
        var error = GatehouseError(.unauthenticated, code: .invalidToken, title: "Unauthorized", detail: detail)
        error.dpopChallenge = true
        return error
    }

    /// The same refusal at a protected route (RFC 9449 §7.1): 401 with a `DPoP` challenge.
    public var atProtectedRoute: GatehouseError {
        var error = GatehouseError(.unauthenticated, code: code, title: title, detail: detail)
        error.dpopNonce = dpopNonce
        error.dpopChallenge = true
        return error
    }

    public static func unauthorizedClient(_ detail: String) -> GatehouseError {
        GatehouseError(.oauth, code: .unauthorizedClient, title: "Unauthorized client", detail: detail)
    }

    /// Client authentication failed or was missing at a token endpoint.
    public static func clientAuthenticationFailed(_ detail: String) -> GatehouseError {
        GatehouseError(.clientAuthentication, code: .invalidClient, title: "Invalid client", detail: detail)
    }
}
