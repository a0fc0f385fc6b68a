import Foundation
import NIOCore
import Testing

@testable import GatehouseSMTP

struct TransferEncodingTests {
    /// A minimal quoted-printable decoder, independent of the encoder under test.
    func decodeQuotedPrintable(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "=") {
                if bytes[index + 1] == 13 {
                    index += 3
                    continue
                }
                output.append(UInt8(String(decoding: bytes[index + 1...index + 2], as: UTF8.self), radix: 16)!)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }

    @Test(arguments: [
        "plain ascii\r\n",
        "trailing space \r\ntrailing tab\t\r\n",
        "equals = sign and =3D\r\n",
        String(repeating: "long line ", count: 30) + "\r\n",
        String(repeating: "é", count: 100) + "\r\n",
        String(repeating: "x", count: 75) + "\r\n" + String(repeating: "x", count: 76) + "\r\n"
            + String(repeating: "x", count: 77) + "\r\n",
        String(repeating: "x", count: 74) + "é\r\n",
        ".\r\n.leading dot\r\n",
    ])
    func quotedPrintableRoundTripsWithShortLines(_ input: String) {
        let encoded = QuotedPrintable.encode(input)
        #expect(decodeQuotedPrintable(encoded) == Array(input.utf8))
        for line in encoded.components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= 76, "\(line)")
            #expect(!line.hasSuffix(" ") && !line.hasSuffix("\t"))
        }
        #expect(encoded.utf8.allSatisfy { $0 < 128 })
    }

    @Test func base64MatchesFoundationAndWrapsAt76() {
        for length in [0, 1, 2, 3, 4, 56, 57, 58, 200] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            #expect(Base64.encode(bytes) == Data(bytes).base64EncodedString())
            let body = Base64.encodeBody(bytes)
            #expect(body.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 76 })
            #expect(Data(base64Encoded: body.replacing("\r\n", with: "")) == Data(bytes))
        }
    }

    @Test(arguments: [
        "Grüße",
        "你好，世界，这是一封很长的邮件主题，需要拆分成多个编码字",
        "🎉👩‍👩‍👧‍👦🇩🇪" + String(repeating: "e\u{301}", count: 30),
        String(repeating: "a\u{308}", count: 40),
        "e" + String(repeating: "\u{301}", count: 60),  // one oversized grapheme cluster
    ])
    func encodedWordsAreShortAndDecodeToTheOriginal(_ text: String) throws {
        let words = RFC2047.encodedWords(text)
        var decoded = ""
        for word in words {
            #expect(word.utf8.count <= 75)
            #expect(word.hasPrefix("=?utf-8?B?") && word.hasSuffix("?="))
            let payload = try #require(Data(base64Encoded: String(word.dropFirst(10).dropLast(2))))
            // Each word must hold whole characters: valid UTF-8 on its own.
            decoded += try #require(String(validating: Array(payload), as: UTF8.self))
        }
        #expect(decoded == text)
        #expect(words.count > 1 || text.utf8.count <= RFC2047.maximumBytesPerWord)
    }

    @Test(arguments: [
        ("a\r\n.\r\nb\r\n", "a\r\n..\r\nb\r\n.\r\n"),
        (".leading\r\n", "..leading\r\n.\r\n"),
        ("no final newline", "no final newline\r\n.\r\n"),
        ("bare\nLF\n.\n", "bare\r\nLF\r\n..\r\n.\r\n"),
        ("smuggle\n.\r\nMAIL FROM:<x>", "smuggle\r\n..\r\nMAIL FROM:<x>\r\n.\r\n"),
        ("lone\rCR", "lone\r\nCR\r\n.\r\n"),
        ("", ".\r\n"),
        ("mid.dot\r\n", "mid.dot\r\n.\r\n"),
    ])
    func dotStuffingAndLineEndings(_ input: String, _ expected: String) {
        #expect(String(buffer: SMTPDataEncoder.encode(input)) == expected)
    }
}
