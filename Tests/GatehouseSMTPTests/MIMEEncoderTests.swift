import Foundation
import Testing

@testable import GatehouseSMTP

struct MIMEEncoderTests {
    let base = MailMessage(
        from: MailAddress("noreply@gatehouse.test", name: "Gatehouse"),
        to: [MailAddress("ada@example.test")],
        subject: "Hello",
        textBody: "Body\n",
        messageID: "<id-1@gatehouse.test>",
        date: Date(timeIntervalSince1970: 1_795_298_400)
    )

    func encode(_ message: MailMessage) throws -> String {
        try MIMEEncoder().encode(message).text
    }

    func headerBlock(_ text: String) -> String {
        String(text[..<text.range(of: "\r\n\r\n")!.lowerBound])
    }

    @Test func plainMessageLayout() throws {
        let text = try encode(base)
        #expect(
            headerBlock(text) == """
                Date: Sat, 21 Nov 2026 22:00:00 +0000\r
                From: Gatehouse <noreply@gatehouse.test>\r
                To: ada@example.test\r
                Subject: Hello\r
                Message-ID: <id-1@gatehouse.test>\r
                MIME-Version: 1.0\r
                Content-Type: text/plain; charset=utf-8\r
                Content-Transfer-Encoding: quoted-printable
                """
        )
        #expect(text.hasSuffix("\r\n\r\nBody\r\n"))
    }

    @Test func everyLineEndsInCRLFAndIsShort() throws {
        var message = base
        message.subject = String(repeating: "word ", count: 40) + "end"
        message.textBody =
            "a\nb\rc\r\nd " + String(repeating: "é", count: 300) + "\n" + String(repeating: "y", count: 1_000)
        message.htmlBody = "<p>" + String(repeating: "z", count: 500) + "</p>"
        message.to = (1...12).map { MailAddress("user\($0)@example.test", name: "User Number \($0)") }
        let text = try encode(message)
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == 10 {
            #expect(index > 0 && bytes[index - 1] == 13)
        }
        for line in text.components(separatedBy: "\r\n") {
            #expect(line.utf8.count <= 78, "\(line)")
            #expect(!line.contains("\r"))
        }
        #expect(bytes.allSatisfy { $0 < 128 })
    }

    @Test(arguments: ["Hi\r\nBcc: x@evil.test", "Hi\nBcc: x@evil.test", "Hi\rBcc: x@evil.test"])
    func headerInjectionInSubjectThrows(_ evil: String) throws {
        do {
            var message = base
            message.subject = evil
            let error = try #require(throws: SMTPError.self) { try encode(message) }
            #expect(error.kind == .invalidMessage)
            #expect(error.isPermanent)
        }
    }

    @Test func headerInjectionAnywhereThrows() {
        var cases: [MailMessage] = []
        var message = base
        message.from.name = "Eve\r\nBcc: x@evil.test"
        cases.append(message)
        message = base
        message.from.address = "eve@evil.test\r\nRCPT TO:<x@evil.test>"
        cases.append(message)
        message = base
        message.to = [MailAddress("ada@example.test\n")]
        cases.append(message)
        message = base
        message.to = [MailAddress("ada@example.test", name: "Ada\nBcc: x@evil.test")]
        cases.append(message)
        message = base
        message.messageID = "<id@x>\r\nBcc: x@evil.test"
        cases.append(message)
        message = base
        message.extraHeaders = [MailHeader("Reply-To", "a@b.test\r\nBcc: x@evil.test")]
        cases.append(message)
        message = base
        message.extraHeaders = [MailHeader("X-Evil\r\nBcc", "x")]
        cases.append(message)
        for message in cases {
            #expect(throws: SMTPError.self) { try encode(message) }
        }
    }

    @Test func malformedAddressesAndIDsThrow() {
        for address in [
            "", "no-at-sign", "@example.test", "ada@", "a b@example.test", "<ada@example.test>", "ädä@example.test",
            "a,b@example.test",
        ] {
            var message = base
            message.to = [MailAddress(address)]
            #expect(throws: SMTPError.self, "\(address)") { try encode(message) }
        }
        for id in ["id@x", "<id>", "<@x>", "<a@>", "<a b@x>", "<a@x"] {
            var message = base
            message.messageID = id
            #expect(throws: SMTPError.self, "\(id)") { try encode(message) }
        }
        var message = base
        message.to = []
        #expect(throws: SMTPError.self) { try encode(message) }
    }

    @Test func reservedExtraHeadersThrowAndOthersAreWritten() throws {
        for name in ["Bcc", "content-type", "SUBJECT", "Message-ID"] {
            var message = base
            message.extraHeaders = [MailHeader(name, "x")]
            #expect(throws: SMTPError.self, "\(name)") { try encode(message) }
        }
        var message = base
        let unsubscribe = "<https://gatehouse.test/unsubscribe?token=" + String(repeating: "a", count: 120) + "&x=?y>"
        message.extraHeaders = [
            MailHeader("Reply-To", "support@gatehouse.test"), MailHeader("List-Unsubscribe", unsubscribe),
            MailHeader("X-Note", "Grüße"),
        ]
        let headers = headerBlock(try encode(message))
        #expect(headers.contains("\r\nReply-To: support@gatehouse.test\r\n"))
        #expect(headers.contains("\r\nList-Unsubscribe: \(unsubscribe)\r\n"))  // structured value left intact
        #expect(headers.contains("\r\nX-Note: =?utf-8?B?R3LDvMOfZQ==?="))
    }

    @Test func displayNamesAreAtomsQuotedOrEncoded() throws {
        #expect(HeaderEncoding.displayNameTokens("Ada Lovelace") == ["Ada", "Lovelace"])
        #expect(HeaderEncoding.displayNameTokens("Lovelace, Ada") == ["\"Lovelace, Ada\""])
        #expect(HeaderEncoding.displayNameTokens("A \"B\" \\C") == ["\"A \\\"B\\\" \\\\C\""])
        #expect(HeaderEncoding.displayNameTokens("Zoë") == ["=?utf-8?B?Wm/Dqw==?="])
        #expect(HeaderEncoding.displayNameTokens("=?utf-8?B?x?=") == RFC2047.encodedWords("=?utf-8?B?x?="))
    }

    @Test func multipartHasBothPartsAndAFreshBoundary() throws {
        var message = base
        message.htmlBody = "<p>Hi</p>"
        let encoded = try MIMEEncoder().encode(message)
        let boundary = try #require(encoded.boundary)
        #expect(encoded.text.contains("Content-Type: multipart/alternative;\r\n boundary=\"\(boundary)\"\r\n"))
        let textIndex = try #require(encoded.text.range(of: "Content-Type: text/plain; charset=utf-8"))
        let htmlIndex = try #require(encoded.text.range(of: "Content-Type: text/html; charset=utf-8"))
        #expect(textIndex.lowerBound < htmlIndex.lowerBound)
        #expect(encoded.text.hasSuffix("\r\n--\(boundary)--\r\n"))
        #expect(encoded.text.components(separatedBy: "--\(boundary)").count == 4)
        #expect(try MIMEEncoder().encode(message).boundary != boundary)
    }

    @Test func boundaryOccurringInTheContentIsReplaced() throws {
        let candidates = ["Body", "Hi", "safe-boundary"]
        var message = base
        message.htmlBody = "<p>Hi</p>"
        let encoded = try MIMEEncoder(boundaries: { candidates[min($0, 2)] }).encode(message)
        #expect(encoded.boundary == "safe-boundary")
    }

    @Test func dateFormatting() {
        let cases: [(TimeInterval, String)] = [
            (0, "Thu, 01 Jan 1970 00:00:00 +0000"),
            (1_795_298_400, "Sat, 21 Nov 2026 22:00:00 +0000"),
            (1_709_168_461, "Thu, 29 Feb 2024 01:01:01 +0000"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 +0000"),
            (-1, "Wed, 31 Dec 1969 23:59:59 +0000"),
            (1_795_298_400.999, "Sat, 21 Nov 2026 22:00:00 +0000"),
        ]
        for (seconds, expected) in cases {
            #expect(RFC5322Date.format(Date(timeIntervalSince1970: seconds)) == expected)
        }
    }
}
