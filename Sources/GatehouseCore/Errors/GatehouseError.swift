import GatehouseAPI

/// An error a flow raises for the caller to see. What the client sees (status, code, message) is kept
/// apart from the internal `cause`, which only the log gets.
public struct GatehouseError: Error, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: ErrorCode
    public var title: String
    public var detail: String?
    public var fieldErrors: [FieldError]
    /// Seconds, for 429 and 503.
    public var retryAfter: Int?
    public var remainingAttempts: Int?
    public var cause: (any Error)?

    public init(
        status: Int, code: ErrorCode, title: String, detail: String? = nil, fieldErrors: [FieldError] = [],
        retryAfter: Int? = nil, remainingAttempts: Int? = nil, cause: (any Error)? = nil
    ) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.fieldErrors = fieldErrors
        self.retryAfter = retryAfter
        self.remainingAttempts = remainingAttempts
        self.cause = cause
    }

    public var description: String { "\(status) \(code): \(detail ?? title)" }

    public var problem: Problem {
        Problem(
            status: status, code: code, title: title, detail: detail,
            errors: fieldErrors.isEmpty ? nil : fieldErrors, remainingAttempts: remainingAttempts)
    }
}

extension GatehouseError {
    public static func validation(_ result: ValidationResult) -> GatehouseError {
        GatehouseError(
            status: 422, code: .validationFailed, title: "Validation failed",
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
        GatehouseError(status: 400, code: code, title: "Bad request", detail: detail)
    }

    public static let invalidCredentials = GatehouseError(
        status: 401, code: .invalidCredentials, title: "Invalid credentials",
        detail: "The email or password is wrong.")

    public static let emailNotVerified = GatehouseError(
        status: 403, code: .emailNotVerified, title: "Email not verified",
        detail: "Verify the email address before signing in.")

    public static let accountDisabled = GatehouseError(
        status: 403, code: .accountDisabled, title: "Account disabled", detail: "This account is disabled.")

    public static let alreadyRegistered = GatehouseError(
        status: 409, code: .alreadyRegistered, title: "Already registered",
        detail: "An account with this email already exists.")

    public static func unauthorized(_ detail: String, code: ErrorCode = .invalidToken) -> GatehouseError {
        GatehouseError(status: 401, code: code, title: "Unauthorized", detail: detail)
    }

    public static func notFound(_ detail: String) -> GatehouseError {
        GatehouseError(status: 404, code: .notFound, title: "Not found", detail: detail)
    }

    public static func rateLimited(retryAfter: Int) -> GatehouseError {
        GatehouseError(
            status: 429, code: .rateLimited, title: "Too many requests",
            detail: "Too many attempts. Try again later.", retryAfter: max(1, retryAfter))
    }

    public static func busy(retryAfter: Int) -> GatehouseError {
        GatehouseError(
            status: 503, code: .serverBusy, title: "Server busy",
            detail: "The server is at capacity. Try again shortly.", retryAfter: max(1, retryAfter))
    }

    public static func invalidClient(_ detail: String) -> GatehouseError {
        GatehouseError(status: 400, code: .invalidClient, title: "Invalid client", detail: detail)
    }
}

/// An RFC 6749 error for `/oauth/*` routes.
public struct OAuthError: Error, Sendable, CustomStringConvertible {
    public var status: Int
    public var error: String
    public var errorDescription: String?
    public var retryAfter: Int?

    public init(status: Int = 400, error: String, description: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.error = error
        self.errorDescription = description
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status) \(error): \(errorDescription ?? "")" }

    public static func invalidRequest(_ d: String) -> OAuthError { OAuthError(error: "invalid_request", description: d) }
    public static func invalidGrant(_ d: String) -> OAuthError { OAuthError(error: "invalid_grant", description: d) }
    public static func invalidClient(_ d: String) -> OAuthError {
        OAuthError(status: 401, error: "invalid_client", description: d)
    }
    public static func unauthorizedClient(_ d: String) -> OAuthError {
        OAuthError(error: "unauthorized_client", description: d)
    }
    public static func unsupportedGrantType(_ d: String) -> OAuthError {
        OAuthError(error: "unsupported_grant_type", description: d)
    }
    public static func invalidScope(_ d: String) -> OAuthError { OAuthError(error: "invalid_scope", description: d) }
}
