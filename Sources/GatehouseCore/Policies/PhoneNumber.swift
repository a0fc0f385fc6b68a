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

    /// Two-digit country calling codes (ITU-T E.164 assignments); `1` and `7` are the only one-digit
    /// ones and every other code has three digits, so the set alone splits any number. By hand: no
    /// package on this machine's mirror carries the numbering plan.
    private static let twoDigitCodes: Set<Substring> = [
        "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46", "47", "48", "49",
        "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63", "64", "65", "66", "81", "82", "84",
        "86", "90", "91", "92", "93", "94", "95", "98",
    ]

    /// The country calling code of a valid E.164 number (`+4791234567` → `47`): what SMS budgets per
    /// country count by.
    public static func countryCode(_ number: String) -> String {
        let digits = number.drop { $0 == "+" }
        if digits.first == "1" || digits.first == "7" { return String(digits.prefix(1)) }
        if twoDigitCodes.contains(digits.prefix(2)) { return String(digits.prefix(2)) }
        return String(digits.prefix(3))
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
