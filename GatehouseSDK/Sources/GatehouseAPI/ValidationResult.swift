/// The outcome of validating a form: a general message and per-field messages.
///
/// Mirrors the validation result app developers know from Primer's SDK; the server sends it as the
/// `errors` array of a `validation_failed` problem document.
public struct ValidationResult: Hashable, Sendable {
    /// Every problem found, general ones with a `nil` field.
    public private(set) var errors: [FieldError]

    public init(errors: [FieldError] = []) { self.errors = errors }

    /// `true` while nothing has been invalidated.
    public var isValid: Bool { errors.isEmpty }

    /// The first message that is not about one field.
    public var message: String? { errors.first { $0.field == nil }?.message }

    /// Messages per field name.
    public var fieldMessages: [String: String] {
        var result: [String: String] = [:]
        for error in errors {
            if let field = error.field, result[field] == nil { result[field] = error.message }
        }
        return result
    }

    /// Marks the whole input invalid with a general message.
    public mutating func invalidate(withErrorMessage message: String) {
        errors.append(FieldError(field: nil, code: .validationFailed, message: message))
    }

    /// Adds a general problem with a specific code.
    public mutating func invalidate(code: ErrorCode, message: String) {
        errors.append(FieldError(field: nil, code: code, message: message))
    }

    /// Marks one field invalid without a message of its own.
    public mutating func invalidate(field: String) {
        errors.append(FieldError(field: field, code: .invalidValue, message: "\(field) is invalid."))
    }

    /// Marks one field invalid with a message.
    public mutating func invalidate(field: String, withErrorMessage message: String) {
        errors.append(FieldError(field: field, code: .invalidValue, message: message))
    }

    /// Marks one field invalid with a specific code and message.
    public mutating func invalidate(field: String, code: ErrorCode, message: String) {
        errors.append(FieldError(field: field, code: code, message: message))
    }
}
