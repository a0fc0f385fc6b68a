import GatehouseAPI

/// E.164 phone numbers: `+`, a country code not starting with 0, at most 15 digits in all. Spaces,
/// dashes and parentheses people type are dropped first.
public enum PhoneNumber {
    public static func normalize(_ raw: String) -> String {
        raw.filter { !" -().".contains($0) }
    }

    public static func isValid(_ number: String) -> Bool {
        guard number.hasPrefix("+") else { return false }
        let digits = number.dropFirst()
        return (7...15).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber } && digits.first != "0"
    }

    public static func validate(_ raw: String, field: String = "phone", into result: inout ValidationResult) -> String {
        let number = normalize(raw)
        if number.isEmpty {
            result.invalidate(field: field, code: .required, message: "Enter a phone number.")
        } else if !isValid(number) {
            result.invalidate(field: field, code: .invalidFormat, message: "Use the international format, such as +4791234567.")
        }
        return number
    }

    /// `+47******567`: enough for the user to recognise, too little to harvest.
    public static func mask(_ number: String) -> String {
        guard number.count > 6 else { return String(repeating: "*", count: number.count) }
        return String(number.prefix(3)) + String(repeating: "*", count: number.count - 6) + String(number.suffix(3))
    }
}

extension EmailAddress {
    /// `j***@example.com`.
    public static func mask(_ email: String) -> String {
        guard let at = email.firstIndex(of: "@"), let first = email.first else { return "***" }
        return String(first) + "***" + email[at...]
    }
}
