/// One field-level problem: how a ``ValidationResult`` travels on the wire.
public struct FieldError: Codable, Hashable, Sendable {
    /// The JSON field the problem is about, or `nil` for a general message.
    public var field: String?
    public var code: ErrorCode
    public var message: String

    public init(field: String?, code: ErrorCode, message: String) {
        self.field = field
        self.code = code
        self.message = message
    }

    public func encode(to encoder: any Encoder) throws {
        // `field` is always present (null for a general message), as the contract shows.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(field, forKey: .field)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
    }

    private enum CodingKeys: String, CodingKey { case field, code, message }
}

/// An RFC 9457 problem document, extended with a stable `code` and field `errors`.
public struct Problem: Codable, Hashable, Sendable, Error {
    public var type: String
    public var title: String
    public var status: Int
    public var code: ErrorCode
    public var detail: String?
    public var errors: [FieldError]?
    /// Attempts left, for wrong one-time codes.
    public var remainingAttempts: Int?
    /// A device authenticator's counts, for a wrong signature and a deregistration.
    public var maxFailureCount: Int?
    public var previousFailureCount: Int?
    public var remainingFailureCount: Int?
    /// For `mfa_required`: the flow a second factor completes, and the factors that may complete it.
    public var flowId: String?
    public var factors: [String]?
    /// For `mfa_required`: the user has no factor yet and must enrol one of `factors` in the flow.
    public var enrol: Bool?

    public init(
        status: Int, code: ErrorCode, title: String, detail: String? = nil, errors: [FieldError]? = nil,
        remainingAttempts: Int? = nil, failureCounts: FailureCounts? = nil, flowId: String? = nil, factors: [String]? = nil,
        enrol: Bool? = nil
    ) {
        self.type = "urn:gatehouse:error:\(code.rawValue)"
        self.title = title
        self.status = status
        self.code = code
        self.detail = detail
        self.errors = errors
        self.remainingAttempts = remainingAttempts
        self.maxFailureCount = failureCounts?.maxFailureCount
        self.previousFailureCount = failureCounts?.previousFailureCount
        self.remainingFailureCount = failureCounts?.remainingFailureCount
        self.flowId = flowId
        self.factors = factors
        self.enrol = enrol
    }

    /// The device authenticator's counts, when the problem carries them.
    public var failureCounts: FailureCounts? {
        guard let maxFailureCount, let previousFailureCount else { return nil }
        return FailureCounts(max: maxFailureCount, previous: previousFailureCount)
    }

    private enum CodingKeys: String, CodingKey {
        case type, title, status, code, detail, errors
        case remainingAttempts = "remaining_attempts"
        case maxFailureCount = "max_failure_count"
        case previousFailureCount = "previous_failure_count"
        case remainingFailureCount = "remaining_failure_count"
        case flowId = "flow_id"
        case factors, enrol
    }
}

/// An RFC 6749 error, the shape used under `/oauth/*`.
public struct OAuthErrorBody: Codable, Hashable, Sendable {
    public var error: String
    public var errorDescription: String?

    public init(error: String, errorDescription: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
    }

    private enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}
