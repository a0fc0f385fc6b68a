import Crypto
import Foundation

/// The accounts of the `login-totp` scenario: each has an authenticator app whose secret the load
/// generator derives from the account's number, so it can make the codes. Each account signs in once per
/// run: a TOTP step is accepted once, so a pool larger than a run's sign-ins is imported before it
/// (`--print-totp-users`). RFC 6238 is written out here because the generator must not share
/// Gatehouse's own implementation of what it measures.
public struct BenchTOTPUser: Sendable {
    public var user: SeedUser
    public var secret: [UInt8]

    public static let password = "bench password totp"

    public static func make(count: Int) -> [BenchTOTPUser] {
        (0..<count).map { index in
            BenchTOTPUser(
                user: SeedUser(email: "bench-totp-\(index)@example.com", password: password),
                secret: Array(SHA256.hash(data: Data("gatehouse-bench-totp-\(index)".utf8)).prefix(20)))
        }
    }

    /// The 6-digit code of the current 30-second step (HMAC-SHA1, dynamic truncation).
    public func code(at date: Date = Date()) -> String {
        var counter = UInt64(date.timeIntervalSince1970 / 30).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let value =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        let code = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - code.count) + code
    }

    /// The import line (`gatehouse users import`) of this account, with a shared password hash.
    public func importLine(passwordHash: String) throws -> String {
        let line = ["email": user.email, "password_hash": passwordHash, "totp_secret": Self.base32(secret)]
        let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var out = ""
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }
}
