import GatehouseCore

/// `application/x-www-form-urlencoded` bodies, decoded straight from the bytes. Foundation's
/// `removingPercentEncoding` bridges through NSString and was 17 % of an introspection's CPU time;
/// Hummingbird's own decoder is package-internal. So this small decoder is written by hand.
enum FormBody {
    /// Fields by name; a repeated field, a bad escape or invalid UTF-8 is a 400 (RFC 6749 §3.1).
    static func fields(_ bytes: some Collection<UInt8>) throws -> [String: String] {
        var fields: [String: String] = [:]
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : ""
            else { throw GatehouseError.badRequest("The form body is malformed.") }
            guard fields[key] == nil else { throw GatehouseError.badRequest("Parameter \(key) is repeated.") }
            fields[key] = value
        }
        return fields
    }

    /// One name or value: `+` is a space, `%XX` a byte; the result must be valid UTF-8.
    static func decode(_ raw: some Collection<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index != raw.endIndex {
            let byte = raw[index]
            switch byte {
            case UInt8(ascii: "+"):
                out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                let high = raw.index(after: index)
                guard high != raw.endIndex else { return nil }
                let low = raw.index(after: high)
                guard low != raw.endIndex, let h = hexValue(raw[high]), let l = hexValue(raw[low]) else { return nil }
                out.append(h << 4 | l)
                index = low
            default:
                out.append(byte)
            }
            index = raw.index(after: index)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
