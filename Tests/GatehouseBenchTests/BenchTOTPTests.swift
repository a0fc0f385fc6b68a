import Foundation
import GatehouseBench
import Testing

@Suite("Bench: the login-totp accounts")
struct BenchTOTPTests {
    @Test("The generator's TOTP matches RFC 6238's SHA-1 vectors (last 6 digits); the import line carries the secret in base32")
    func vectors() throws {
        var account = BenchTOTPUser.make(count: 1)[0]
        account.secret = Array("12345678901234567890".utf8)
        let vectors: [(TimeInterval, String)] = [
            (59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"),
            (2_000_000_000, "279037"), (20_000_000_000, "353130"),
        ]
        for (time, code) in vectors {
            #expect(account.code(at: Date(timeIntervalSince1970: time)) == code, "\(time)")
        }
        let line = try account.importLine(passwordHash: "$argon2id$x")
        #expect(line.contains(#""totp_secret":"GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ""#), "\(line)")
        #expect(BenchTOTPUser.make(count: 3).map(\.user.email) == (0..<3).map { "bench-totp-\($0)@example.com" })
    }
}
