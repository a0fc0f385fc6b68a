import NIOCore
import Testing

@testable import GatehouseSMTP

struct SMTPReplyDecoderTests {
    func decodeAll(_ chunks: [String]) throws -> [SMTPReply] {
        var decoder = SMTPReplyDecoder()
        var replies: [SMTPReply] = []
        for chunk in chunks {
            var buffer = ByteBuffer(string: chunk)
            decoder.append(&buffer)
            while let reply = try decoder.nextReply() { replies.append(reply) }
        }
        return replies
    }

    @Test func singleAndMultiLineReplies() throws {
        let replies = try decodeAll(["220 mail.test ESMTP ready\r\n250-mail.test\r\n250-SIZE 1000\r\n250 STARTTLS\r\n"])
        #expect(
            replies == [
                SMTPReply(code: 220, lines: ["mail.test ESMTP ready"]),
                SMTPReply(code: 250, lines: ["mail.test", "SIZE 1000", "STARTTLS"]),
            ])
    }

    @Test func repliesSplitAcrossReadsAndBareLineFeeds() throws {
        let replies = try decodeAll(["25", "0-first\r", "\n250 second\n", "354", " go\r\n", "221\r\n"])
        #expect(
            replies == [
                SMTPReply(code: 250, lines: ["first", "second"]),
                SMTPReply(code: 354, lines: ["go"]),
                SMTPReply(code: 221, lines: [""]),
            ])
    }

    @Test func leftoverInputIsVisible() throws {
        var decoder = SMTPReplyDecoder()
        var buffer = ByteBuffer(string: "220 go ahead\r\n250-inj")
        decoder.append(&buffer)
        #expect(try decoder.nextReply()?.code == 220)
        #expect(try decoder.nextReply() == nil)
        #expect(decoder.hasUnprocessedInput)
        var rest = ByteBuffer(string: "ected\r\n")
        decoder.append(&rest)
        #expect(try decoder.nextReply() == nil)
        #expect(decoder.hasUnprocessedInput)  // half a multi-line reply
    }

    @Test(arguments: ["hello\r\n", "25\r\n", "2500 x\r\n", "650 x\r\n", "250_x\r\n", "250-a\r\n251 b\r\n"])
    func malformedRepliesAreProtocolViolations(_ input: String) {
        let error = #expect(throws: SMTPError.self) { try decodeAll([input]) }
        #expect(error?.kind == .protocolViolation)
    }

    @Test func overlongLinesAndRepliesAreRejected() {
        #expect(throws: SMTPError.self) { try decodeAll([String(repeating: "x", count: 5000)]) }
        #expect(throws: SMTPError.self) { try decodeAll([String(repeating: "250-x\r\n", count: 600)]) }
    }

    @Test func controlCharactersInTextAreNeutralised() throws {
        let reply = try #require(try decodeAll(["550 bad\u{1B}[31m\tthing\u{2028}x\r\n"]).first)
        #expect(reply.text == "bad?[31m?thing?x")
    }

    @Test func ehloExtensions() {
        let reply = SMTPReply(
            code: 250,
            lines: [
                "mail.test greets you", "SIZE 35882577", "8BITMIME", "AUTH PLAIN login", "AUTH=CRAM-MD5", "STARTTLS",
                "PIPELINING",
            ]
        )
        let extensions = SMTPExtensions(ehloReply: reply)
        #expect(extensions.startTLS)
        #expect(extensions.eightBitMIME)
        #expect(extensions.maximumSize == 35_882_577)
        #expect(extensions.authMechanisms == ["PLAIN", "LOGIN", "CRAM-MD5"])

        let bare = SMTPExtensions(
            ehloReply: SMTPReply(code: 250, lines: ["STARTTLS pretends to be the greeting", "SIZE"]))
        #expect(!bare.startTLS)
        #expect(bare.maximumSize == 0)
    }
}
