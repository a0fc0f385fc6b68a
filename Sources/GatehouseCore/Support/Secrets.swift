import ExtrasBase64
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

    /// Whether `a` equals any of `candidates`, comparing with every one (no early exit that would tell
    /// which matched).
    public static func constantTimeEqualsAny(_ a: String, _ candidates: [String]) -> Bool {
        candidates.reduce(false) { matched, candidate in constantTimeEquals(a, candidate) || matched }
    }

    private static let hexDigits = Array("0123456789abcdef")
}

/// base64url without padding (RFC 4648 §5), as JWTs, PKCE and our tokens use it. Through
/// swift-extras-base64: Foundation's encoder plus character replacement was 9 % of a refresh.
public enum Base64URL {
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64.encodeToString(bytes: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Digests and other byte sequences that are not collections.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String { encode(Array(bytes)) }

    /// `nil` for anything that is not unpadded base64url. Padding is refused outright (the decoder
    /// would take it), so a JWT's signature has exactly one spelling.
    public static func decode(_ string: String) -> [UInt8]? {
        guard !string.utf8.contains(UInt8(ascii: "=")) else { return nil }
        return try? Base64.decode(string: string, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }
}
