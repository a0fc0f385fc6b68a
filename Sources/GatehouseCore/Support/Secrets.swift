import Crypto
import Foundation

/// Random secrets, hashes and constant-time comparison: the small vocabulary every flow shares.
public enum Secrets {
    /// `count` random bytes from the system CSPRNG.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// 256 random bits, base64url without padding, behind a readable prefix.
    public static func token(prefix: String) -> String {
        prefix + Base64URL.encode(randomBytes(32))
    }

    /// A uniformly random decimal code of `digits` digits.
    public static func numericCode(digits: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<digits).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }

    public static func sha256Hex(_ value: String) -> String {
        hex(SHA256.hash(data: Data(value.utf8)))
    }

    public static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        var out = ""
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0f)])
        }
        return out
    }

    /// Compares two secrets in time that depends only on their lengths.
    public static func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }

    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        constantTimeEquals(Array(a.utf8), Array(b.utf8))
    }

    private static let hexDigits = Array("0123456789abcdef")
}

/// base64url without padding (RFC 4648 §5), as JWTs, PKCE and our tokens use it.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ string: String) -> [UInt8]? {
        var s = string.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s.append("=") }
        return Data(base64Encoded: s).map(Array.init)
    }
}
