import Foundation
import GatehouseAPI

/// Email syntax and normalization. Deliberately permissive (RFC 5321 is wider than any regex); the
/// verification mail is the real proof that an address works.
public enum EmailAddress {
    public static let maxLength = 254

    public static func normalize(_ raw: String) -> String {
        raw.trimmingCharacters(in: .whitespaces).lowercased()
    }

    public static func isValid(_ email: String) -> Bool {
        guard email.utf8.count <= maxLength, !email.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            return false
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let domain = parts[1]
        guard domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains("..") else {
            return false
        }
        return !email.unicodeScalars.contains { $0.value < 0x20 || $0 == "<" || $0 == ">" || $0 == "," }
    }

    public static func validate(_ raw: String, field: String = "email", into result: inout ValidationResult) -> String {
        let email = normalize(raw)
        if email.isEmpty {
            result.invalidate(field: field, code: .required, message: "Enter an email address.")
        } else if !isValid(email) {
            result.invalidate(field: field, code: .invalidFormat, message: "Enter a valid email address.")
        }
        return email
    }
}
