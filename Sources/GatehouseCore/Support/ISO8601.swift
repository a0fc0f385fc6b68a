import Foundation

/// ISO 8601 times as exports write them: `T` or a space, any fraction, `Z`, `+00`, `+00:00`.
enum ISO8601 {
    static func parse(_ raw: String) -> Date? {
        var text = raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "T")
        // The fraction is cut to milliseconds, which is all the parser takes.
        if let dot = text.firstIndex(of: ".") {
            let digits = text[text.index(after: dot)...].prefix { $0.isNumber }
            let end = text.index(dot, offsetBy: 1 + digits.count)
            text = String(text[..<dot]) + "." + String((digits + "000").prefix(3)) + String(text[end...])
        }
        // `+00` (PostgreSQL's text form) → `+00:00`.
        if let sign = text.lastIndex(where: { $0 == "+" || $0 == "-" }), text.distance(from: text.startIndex, to: sign) > 10,
            text[sign...].count == 3
        {
            text += ":00"
        }
        if !text.hasSuffix("Z"), !text.contains("+"), text.distance(from: text.startIndex, to: text.endIndex) <= 23 { text += "Z" }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}
