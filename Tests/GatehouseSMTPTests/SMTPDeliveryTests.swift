import Foundation
import GatehouseSMTP
import NIOSSL
import GatehouseTesting
import Testing

/// End-to-end deliveries to a real SMTP server (aiosmtpd via scripts/smtp-sink.py), whose
/// Python email package independently decodes what the client sent.
@Suite(.enabled("needs python3 with aiosmtpd") { try await SinkEnvironment.isAvailable() })
struct SMTPDeliveryTests {
    static let date = Date(timeIntervalSince1970: 1_795_298_400)  // Sat, 21 Nov 2026 22:00:00 +0000

    func message(
        subject: String = "Verify your address",
        text: String = "Hello,\nplease verify.\n",
        html: String? = nil,
        from: MailAddress = MailAddress("noreply@gatehouse.test", name: "Gatehouse"),
        to: [MailAddress] = [MailAddress("ada@example.test", name: "Ada")]
    ) -> MailMessage {
        MailMessage(
            from: from,
            to: to,
            subject: subject,
            textBody: text,
            htmlBody: html,
            messageID: "<\(UUID().uuidString)@gatehouse.test>",
            date: Self.date
        )
    }

    func client(_ url: String, trust sink: SMTPSink? = nil, timeout: Duration = .seconds(10)) throws -> SMTPClient {
        let tls = SMTPConfiguration.TLS(additionalTrustRoots: sink.map { [.file($0.certificatePath)] } ?? [])
        return try SMTPClient(configuration: .parse(url: url, timeout: timeout, tls: tls))
    }

    @Test func plainDeliveryArrivesWithHeadersAndEnvelope() async throws {
        try await withSink { sink in
            let mail = message(to: [MailAddress("ada@example.test", name: "Ada"), MailAddress("bob@example.org")])
            try await client("smtp://127.0.0.1:\(sink.port)").send(mail)

            let received = try sink.onlyMessage()
            #expect(received.mailFrom == "noreply@gatehouse.test")
            #expect(received.rcptTos == ["ada@example.test", "bob@example.org"])
            #expect(!received.tls)
            #expect(received.parsed.subject == "Verify your address")
            #expect(received.parsed.fromName == "Gatehouse")
            #expect(received.parsed.fromAddress == "noreply@gatehouse.test")
            #expect(
                received.parsed.to == [
                    .init(name: "Ada", address: "ada@example.test"), .init(name: "", address: "bob@example.org"),
                ]
            )
            #expect(received.parsed.messageId == mail.messageID)
            #expect(received.parsed.date == "Sat, 21 Nov 2026 22:00:00 +0000")
            #expect(received.parsed.mimeVersion == "1.0")
            #expect(received.parsed.contentType == "text/plain")
            #expect(received.parsed.parts.count == 1)
            #expect(received.parsed.parts.first?.charset == "utf-8")
            #expect(received.parsed.parts.first?.text == "Hello,\nplease verify.\n")
            #expect(received.parsed.defects.isEmpty)
            #expect(received.bareLineFeeds == 0)
            #expect(!received.eightBit)
            #expect(received.maxLineLength <= 78)
        }
    }

    @Test func startTLSWithTrustedSelfSignedCertificate() async throws {
        try await withSink(tls: true) { sink in
            try await client("smtp://localhost:\(sink.port)?starttls=required", trust: sink).send(message())
            #expect(try sink.onlyMessage().tls)
        }
    }

    @Test func startTLSWithUntrustedCertificateFailsWithoutFallback() async throws {
        try await withSink(tls: true) { sink in
            let error = try await #require(throws: SMTPError.self) {
                try await client("smtp://localhost:\(sink.port)").send(message())
            }
            #expect(error.kind == .tls)
            #expect(error.step == .startTLS)
            #expect(!error.isPermanent)
            #expect(try sink.messages().isEmpty)
        }
    }

    @Test func startTLSRequiredButNotOfferedFails() async throws {
        try await withSink { sink in
            let error = try await #require(throws: SMTPError.self) {
                try await client("smtp://127.0.0.1:\(sink.port)?starttls=required").send(message())
            }
            #expect(error.kind == .startTLSUnavailable)
            #expect(!error.isPermanent)
            #expect(try sink.messages().isEmpty)
        }
    }

    @Test func implicitTLS() async throws {
        try await withSink(["--implicit-tls"], tls: true) { sink in
            try await client("smtps://localhost:\(sink.port)", trust: sink).send(message())
            #expect(try sink.onlyMessage().tls)
        }
    }

    @Test func implicitTLSChecksTheCertificateForAnIPAddressHost() async throws {
        try await withSink(["--implicit-tls"], tls: true) { sink in
            // The certificate names IP 127.0.0.1, which NIOSSL checks against the peer address.
            try await client("smtps://127.0.0.1:\(sink.port)", trust: sink).send(message())
            #expect(try sink.onlyMessage().tls)
        }
    }

    @Test func authPlainOverStartTLS() async throws {
        try await withSink(["--auth", "mailer:s3cr3t pass", "--auth-mechanisms", "PLAIN"], tls: true) { sink in
            try await client("smtp://mailer:s3cr3t%20pass@localhost:\(sink.port)", trust: sink).send(message())
            let received = try sink.onlyMessage()
            #expect(received.tls)
            #expect(received.authenticatedAs == "mailer")
        }
    }

    @Test func wrongPasswordIsAPermanentAuthenticationError() async throws {
        try await withSink(["--auth", "mailer:right"], tls: true) { sink in
            let error = try await #require(throws: SMTPError.self) {
                try await client("smtp://mailer:wrong@localhost:\(sink.port)", trust: sink).send(message())
            }
            #expect(error.kind == .rejected)
            #expect(error.step == .authentication)
            #expect(error.replyCode == 535)
            #expect(error.isPermanent)
            #expect(!"\(error)".contains("wrong"))
            #expect(try sink.messages().isEmpty)
        }
    }

    @Test func authLoginWhenOnlyLoginIsOfferedOnLoopbackPlaintext() async throws {
        try await withSink(["--auth", "mailer:pw", "--auth-mechanisms", "LOGIN", "--auth-allow-plaintext"]) { sink in
            try await client("smtp://mailer:pw@127.0.0.1:\(sink.port)").send(message())
            let received = try sink.onlyMessage()
            #expect(!received.tls)
            #expect(received.authenticatedAs == "mailer")
        }
    }

    @Test func credentialsAreNotSentInPlaintextToAHostNotKnownToBeLoopback() async throws {
        try await withSink(["--auth", "mailer:pw", "--auth-allow-plaintext"]) { sink in
            // "127.1" reaches 127.0.0.1 through getaddrinfo but is not a name the client treats as
            // loopback, so it stands in for a remote relay without leaving the machine.
            let error = try await #require(throws: SMTPError.self) {
                try await client("smtp://mailer:pw@127.1:\(sink.port)").send(message())
            }
            #expect(error.kind == .insecureCredentials)
            #expect(!error.isPermanent)
            #expect(try sink.messages().isEmpty)
        }
    }

    @Test func serverRequiringAuthRejectsUnauthenticatedMailPermanently() async throws {
        try await withSink(["--auth", "mailer:pw", "--auth-allow-plaintext"]) { sink in
            let error = try await #require(throws: SMTPError.self) {
                try await client("smtp://127.0.0.1:\(sink.port)").send(message())
            }
            #expect(error.step == .mailFrom)
            #expect(error.replyCode == 530)
            #expect(error.isPermanent)
        }
    }

    @Test func dotStuffingKeepsLinesThatStartWithADot() async throws {
        try await withSink { sink in
            let text = "first\n.\n.leading dot\n..two dots\nlast line .\n."
            try await client("smtp://127.0.0.1:\(sink.port)").send(message(text: text))
            let received = try sink.onlyMessage()
            #expect(received.parsed.parts.first?.text == text + "\n")
            #expect(received.parsed.parts.first?.transferEncoding == "quoted-printable")
        }
    }

    @Test func nonASCIISubjectAndDisplayNamesDecode() async throws {
        try await withSink { sink in
            let subject = "Grüße aus Köln — 你好，世界 🎉👩‍👩‍👧‍👦 — a subject long enough to need several encoded-words"
            let mail = message(
                subject: subject,
                text: "Zoë says hi ☕\n",
                from: MailAddress("noreply@gatehouse.test", name: "Zoë Ünïcødé"),
                to: [
                    MailAddress("ada@example.test", name: "Lovelace, Ada \"Countess\""),
                    MailAddress("li@example.test", name: "李小龙"),
                ]
            )
            try await client("smtp://127.0.0.1:\(sink.port)").send(mail)
            let received = try sink.onlyMessage()
            #expect(received.parsed.subject == subject)
            #expect(received.parsed.fromName == "Zoë Ünïcødé")
            #expect(
                received.parsed.to == [
                    .init(name: "Lovelace, Ada \"Countess\"", address: "ada@example.test"),
                    .init(name: "李小龙", address: "li@example.test"),
                ]
            )
            #expect(received.parsed.parts.first?.text == "Zoë says hi ☕\n")
            #expect(received.parsed.defects.isEmpty)
            #expect(!received.eightBit)
            #expect(received.maxLineLength <= 78)
        }
    }

    @Test func multipartAlternativeHasTextThenHTML() async throws {
        try await withSink { sink in
            let text = "Your code is 123456.\n"
            let html =
                "<p>Your code is <b>123456</b>. Grüße!</p>\n<p>" + String(repeating: "long line ", count: 40) + "</p>\n"
            try await client("smtp://127.0.0.1:\(sink.port)").send(message(text: text, html: html))
            let received = try sink.onlyMessage()
            #expect(received.parsed.contentType == "multipart/alternative")
            #expect(received.parsed.parts.map(\.contentType) == ["text/plain", "text/html"])
            #expect(received.parsed.parts.map(\.text) == [text, html])
            #expect(received.parsed.parts.allSatisfy { $0.charset == "utf-8" })
            #expect(received.parsed.defects.isEmpty)
            #expect(received.maxLineLength <= 78)
        }
    }

    @Test func mostlyNonLatinBodyIsBase64AndLongLinesAreWrapped() async throws {
        try await withSink { sink in
            let text = String(repeating: "这是一封很长的邮件。", count: 60) + "\n第二行\n"
            let longASCII = String(repeating: "x", count: 2_000) + "\n"
            try await client("smtp://127.0.0.1:\(sink.port)").send(message(text: text, html: longASCII))
            let received = try sink.onlyMessage()
            #expect(received.parsed.parts.map(\.transferEncoding) == ["base64", "quoted-printable"])
            #expect(received.parsed.parts.map(\.text) == [text, longASCII])
            #expect(received.maxLineLength <= 78)
        }
    }

    @Test func refusedRecipientIsPermanentAndNothingIsDelivered() async throws {
        try await withSink { sink in
            let mail = message(to: [MailAddress("ada@example.test"), MailAddress("reject-me@example.test")])
            let error = try await #require(throws: SMTPError.self) {
                try await client("smtp://127.0.0.1:\(sink.port)").send(mail)
            }
            #expect(error.step == .recipient)
            #expect(error.replyCode == 550)
            #expect(error.isPermanent)
            #expect(try sink.messages().isEmpty)
        }
    }

    @Test func temporarilyRefusedRecipientIsNotPermanent() async throws {
        try await withSink { sink in
            let error = try await #require(throws: SMTPError.self) {
                try await client("smtp://127.0.0.1:\(sink.port)").send(
                    message(to: [MailAddress("reject-temp@example.test")]))
            }
            #expect(error.replyCode == 451)
            #expect(!error.isPermanent)
        }
    }

    @Test func sinkThatStallsTimesOut() async throws {
        try await withSink(["--stall"]) { sink in
            let client = try client("smtp://127.0.0.1:\(sink.port)", timeout: .seconds(2))
            let mail = message()
            let clock = ContinuousClock()
            let start = clock.now
            let error = try await #require(throws: SMTPError.self) { try await client.send(mail) }
            #expect(error.kind == .timeout)
            #expect(error.step == .greeting)
            // Not a speed check: only that the timeout ended a wait that would otherwise never end.
            #expect(clock.now - start < .seconds(20))
        }
    }
}
