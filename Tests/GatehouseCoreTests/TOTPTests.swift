import Foundation
import GatehouseCore
import Testing

@Suite("TOTP (RFC 6238) and base32")
struct TOTPTests {
    /// RFC 6238 Appendix B, SHA-1 rows: the 20-byte ASCII seed "12345678901234567890", 8 digits.
    @Test(
        "RFC 6238 appendix B test vectors (SHA-1, 8 digits), and their last 6 digits at the default length",
        arguments: [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ] as [(Int64, String)])
    func vectors(time: Int64, expected: String) {
        let seed = Data("12345678901234567890".utf8)
        let step = TOTP.step(at: Date(timeIntervalSince1970: TimeInterval(time)))
        #expect(TOTP.code(secret: seed, step: step, digits: 8) == expected)
        #expect(TOTP.code(secret: seed, step: step) == String(expected.suffix(6)))
    }

    @Test("A code matches its own step and the steps either side, never two away, never another secret's, never a malformed one")
    func window() {
        let secret = Data((0..<20).map { UInt8($0) })
        let now = Date(timeIntervalSince1970: 1_700_000_015)
        let step = TOTP.step(at: now)
        for offset in Int64(-1)...1 {
            #expect(TOTP.matchingStep(TOTP.code(secret: secret, step: step + offset), secret: secret, at: now) == step + offset)
        }
        for offset: Int64 in [-2, 2] {
            let code = TOTP.code(secret: secret, step: step + offset)
            let matched = TOTP.matchingStep(code, secret: secret, at: now)
            // A code two steps away can only match by coincidence with one inside the window.
            #expect(matched == nil || TOTP.code(secret: secret, step: matched!) == code)
        }
        let other = Data(repeating: 7, count: 20)
        #expect(TOTP.matchingStep(TOTP.code(secret: other, step: step), secret: secret, at: now) == nil)
        for bad in ["", "12345", "1234567", "12a456", "１２３４５６", " 123456"] {
            #expect(TOTP.matchingStep(bad, secret: secret, at: now) == nil, "\(bad)")
        }
    }

    @Test("Base32 (RFC 4648 §10 vectors) round-trips every length; the otpauth URI names issuer, account, secret and parameters")
    func base32AndURI() throws {
        let vectors = [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Data(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Data(plain.utf8))
        }
        for length in 0...40 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255) })
            #expect(Base32.decode(Base32.encode(data)) == data)
            #expect(Base32.decode(Base32.encode(data).lowercased()) == data)
        }
        #expect(Base32.decode("MZXW6!") == nil)
        let uri = TOTP.uri(secret: Data("12345678901234567890".utf8), issuer: "auth.example.com", account: "ada lovelace@example.com")
        let components = try #require(URLComponents(string: uri))
        #expect(components.scheme == "otpauth" && components.host == "totp")
        #expect(components.percentEncodedPath == "/auth.example.com:ada%20lovelace%40example.com")
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(query["secret"] == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(query["issuer"] == "auth.example.com" && query["algorithm"] == "SHA1" && query["digits"] == "6" && query["period"] == "30")
    }
}
