import Foundation
import GatehouseAPI

/// Every failure of an ``AuthClient`` call: the server's stable ``ErrorCode``, the HTTP status, a
/// message for people, `Retry-After`, and the field errors as a ``ValidationResult``.
public struct GatehouseError: Error, Sendable, CustomStringConvertible {
    /// The server's code, or `network_error` / `invalid_response` for failures before an answer.
    public var code: ErrorCode
    /// The HTTP status; `nil` when no answer arrived.
    public var status: Int?
    public var message: String
    /// Seconds to wait before trying again (429, 503).
    public var retryAfter: Int?
    /// Attempts left for a one-time code.
    public var remainingAttempts: Int?
    /// Field-level problems, for showing next to the fields.
    public var validation: ValidationResult
    /// A device authenticator's counts after a wrong answer: maximum, failures so far, remaining.
    public var failureCounts: FailureCounts?
    /// With `mfa_required`: the sign-in waiting for its second factor. Answer it with
    /// ``AuthClient/signIn(secondFactor:code:challenge:persist:)``.
    public var secondFactor: SecondFactorChallenge?

    public init(
        code: ErrorCode, status: Int?, message: String, retryAfter: Int? = nil, remainingAttempts: Int? = nil,
        validation: ValidationResult = ValidationResult(), failureCounts: FailureCounts? = nil,
        secondFactor: SecondFactorChallenge? = nil
    ) {
        self.code = code
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
        self.remainingAttempts = remainingAttempts
        self.validation = validation
        self.failureCounts = failureCounts
        self.secondFactor = secondFactor
    }

    public var description: String { "\(status.map(String.init) ?? "-") \(code): \(message)" }

    /// The network failed before the server answered: safe to try again later.
    public static let networkError: ErrorCode = "network_error"
    /// The server answered something the SDK cannot read.
    public static let invalidResponse: ErrorCode = "invalid_response"
    /// No user is signed in.
    public static let notSignedIn: ErrorCode = "not_signed_in"
    /// The session store cannot be used yet: a Keychain item before the device's first unlock, or
    /// another process holding the store's lock for over 30 s. The session is not known to be over.
    /// Retryable; never ``isSessionEnded``.
    public static let storeUnavailable: ErrorCode = "store_unavailable"

    public var isInvalidCredentials: Bool { code == .invalidCredentials }
    /// The first factor was right; the sign-in waits for a second (``secondFactor``).
    public var isSecondFactorRequired: Bool { code == .mfaRequired }
    public var isRateLimited: Bool { code == .rateLimited || status == 429 }
    public var isEmailNotVerified: Bool { code == .emailNotVerified }
    public var isValidationFailure: Bool { code == .validationFailed }
    public var isAlreadyRegistered: Bool { code == .alreadyRegistered }
    /// The client asks for a bot challenge and none was sent (`bot_challenge_required`), or its token
    /// was refused or used before (`bot_challenge_failed`): show the widget again
    /// (``AuthClient/Configuration/botChallenge``).
    public var isBotChallengeRefused: Bool { code == .botChallengeRequired || code == .botChallengeFailed }
    public var isInvalidCode: Bool { code == .invalidCode || code == .codeExpired }
    public var isNetworkError: Bool { code == Self.networkError }
    /// A device authenticator is not registered (any more): sign in and register again.
    public var isDeviceDeregistered: Bool { code == .deviceDeregistered }
    /// The session cannot be used any more; the user must sign in again.
    public var isSessionEnded: Bool {
        code == .invalidGrant || code == .sessionRevoked || code == Self.notSignedIn
    }
    /// Worth trying again later without changing anything.
    public var isRetryable: Bool {
        isNetworkError || isRateLimited || code == Self.storeUnavailable || status == 503 || (status ?? 0) >= 500
    }
}
