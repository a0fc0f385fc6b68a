import GatehouseAPI

/// Rules a new password must meet.
public struct PasswordPolicy: Sendable, Hashable, Codable {
    public var minLength: Int
    /// In UTF-8 bytes: bounds the hashing input so a huge password cannot be used to burn CPU.
    public var maxBytes: Int

    public init(minLength: Int = 10, maxBytes: Int = 1024) {
        self.minLength = minLength
        self.maxBytes = maxBytes
    }

    public func validate(_ password: String, email: String?, field: String = "password", into result: inout ValidationResult) {
        if password.isEmpty {
            result.invalidate(field: field, code: .required, message: "Enter a password.")
        } else if password.count < minLength {
            result.invalidate(field: field, code: .tooShort, message: "Use at least \(minLength) characters.")
        } else if password.utf8.count > maxBytes {
            result.invalidate(field: field, code: .tooLong, message: "Use at most \(maxBytes) bytes.")
        } else if let email, !email.isEmpty, password.lowercased() == email.lowercased() {
            result.invalidate(field: field, code: .sameAsEmail, message: "The password must not be your email address.")
        }
    }

    private enum CodingKeys: String, CodingKey {
        case minLength = "min_length"
        case maxBytes = "max_bytes"
    }
}
