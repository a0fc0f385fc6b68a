import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP) with the parameters every
/// authenticator app accepts: HMAC-SHA-1, 6 digits, 30-second steps. Written here because no package
/// on the machine's list computes them; swift-crypto does the HMAC.
public enum TOTP {
    public static let digits = 6
    public static let period: TimeInterval = 30
    /// 160 bits, RFC 4226 §4's recommended secret length.
    public static let secretLength = 20

    /// The step `date` falls in (RFC 6238 §4: T = floor((now − T0) / X), T0 = the Unix epoch).
    public static func step(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / period).rounded(.down))
    }

    /// The code for `step` (RFC 4226 §5.3: dynamic truncation of HMAC-SHA-1 over the step's 8
    /// big-endian bytes), `digits` long with leading zeros.
    public static func code(secret: Data, step: Int64, digits: Int = TOTP.digits) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The step within ±`window` of `date` whose code is `code`, compared in constant time for every
    /// candidate (so the time taken says nothing about which step matched), or nil.
    public static func matchingStep(_ code: String, secret: Data, at date: Date, window: Int64 = 1) -> Int64? {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let now = step(at: date)
        var found: Int64?
        for candidate in (now - window)...(now + window) {
            if Secrets.constantTimeEquals(self.code(secret: secret, step: candidate), code), found == nil { found = candidate }
        }
        return found
    }

    /// The `otpauth://` URI authenticator apps read from a QR code (Google Authenticator's key-URI
    /// format): `otpauth://totp/Issuer:account?secret=…&issuer=Issuer&algorithm=SHA1&digits=6&period=30`.
    public static func uri(secret: Data, issuer: String, account: String) -> String {
        // Spaces as %20, never `+`: the label is a path, not a form.
        let label = FormEncoding.escape(issuer) + ":" + FormEncoding.escape(account)
        return "otpauth://totp/" + label + "?secret=" + Base32.encode(secret) + "&issuer=" + FormEncoding.escape(issuer)
            + "&algorithm=SHA1&digits=\(digits)&period=\(Int(period))"
    }
}

/// RFC 4648 base32 (upper case, no padding), the alphabet authenticator apps take secrets in. Small
/// enough to write here rather than depend on a package for it.
public enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ data: Data) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in data {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes upper or lower case, ignoring spaces, hyphens and `=` padding; nil for anything else.
    public static func decode(_ text: String) -> Data? {
        var output = Data()
        var buffer: UInt32 = 0
        var bits = 0
        for char in text.uppercased().utf8 where char != 0x20 && char != 0x2d && char != 0x3d {
            guard let value = alphabet.firstIndex(of: char) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                output.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return output
    }
}
