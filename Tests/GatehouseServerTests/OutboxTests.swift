import Foundation
import GatehouseCore
import GatehouseSMTP
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing

@Suite("Outbox delivery")
struct OutboxTests {
    @Test(
        "SMTP down for 20 sign-ups, then up: all 20 mails arrive, none lost",
        .enabled("needs python3 with aiosmtpd") { try await SinkEnvironment.isAvailable() })
    func outage() async throws {
        // Learn a free port from a first sink, then stop it: SMTP is "down" on that port.
        let probe = try await SMTPSink.start()
        let port = probe.port
        await probe.stop()
        var configuration = ServerConfiguration()
        configuration.smtpURL = "smtp://127.0.0.1:\(port)"
        configuration.mailFrom = "Gatehouse <no-reply@gatehouse.test>"
        let transports = try GatehouseServer.transports(configuration, logger: Logger(label: "test"))
        let server = try await TestServer.start(.sqlite, transports: transports) {
            $0.maxSignupsPerIP = 1000
        }
        try await server.withRouter { client in
            for i in 0..<20 {
                let response = try await client.json(
                    .post, "/v1/signup", ["email": "outage\(i)@example.com", "password": "correct horse battery"])
                #expect(response.status == .created)
            }
            // Two rounds against the dead port: every row fails and is rescheduled.
            for _ in 0..<2 {
                while try await server.deliverMail() > 0 {}
                server.clock.advance(by: 3600)
            }
            let pending = try await server.persistence.read { try await $0.outbox.list(status: .pending, limit: 100) }
            #expect(pending.count == 20)
            #expect(pending.allSatisfy { $0.attempts == 2 && $0.lastError != nil })

            let sink = try await SMTPSink.start(["--port", "\(port)"])
            do {
                while try await server.deliverMail() > 0 {}
                let received = try sink.messages()
                #expect(received.count == 20)
                #expect(Set(received.flatMap(\.rcptTos)) == Set((0..<20).map { "outage\($0)@example.com" }))
                #expect(received.allSatisfy { $0.parsed.messageId?.hasSuffix("@127.0.0.1>") == true })
                let sent = try await server.persistence.read { try await $0.outbox.list(status: .sent, limit: 100) }
                #expect(sent.count == 20)
                #expect(sent.allSatisfy { $0.sealedPayload.isEmpty })
            } catch {
                await sink.stop()
                throw error
            }
            await sink.stop()
        }
    }

    @Test("Temporary failures back off and are retried; after the last attempt the row is dead and can be revived")
    func retriesAndDeadLetters() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.withRouter { client in
            _ = try await client.json(.post, "/v1/signup", ["email": "flaky@example.com", "password": "correct horse battery"])
            server.mail.failNext(1)
            try await server.deliverMail()
            #expect(server.mail.messages.isEmpty)
            #expect(try await server.deliverMail() == 0)  // backing off, not due yet
            server.clock.advance(by: 10)
            try await server.deliverMail()
            #expect(server.mail.messages.map(\.recipient) == ["flaky@example.com"])

            _ = try await client.json(.post, "/v1/signup", ["email": "doomed@example.com", "password": "correct horse battery"])
            server.mail.failNext(100)
            for _ in 0..<12 {
                try await server.deliverMail()
                server.clock.advance(by: 3600 * 2)
            }
            let dead = try await server.persistence.read { try await $0.outbox.list(status: .dead, limit: 10) }
            #expect(dead.map(\.recipient) == ["doomed@example.com"])
            server.mail.failNext(0)
            #expect(try await server.persistence.transaction { try await $0.outbox.retry(id: dead[0].id, at: server.clock.now()) })
            try await server.deliverMail()
            #expect(server.mail.messages.last?.recipient == "doomed@example.com")
        }
    }

    @Test("The development outbox writes an .eml file and logs recipient and code")
    func developmentOutbox() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gh-outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logs = CapturedLogs()
        let outbox = DevelopmentOutbox(directory: directory.path, from: "Gatehouse <no-reply@localhost>", logger: logs.logger(label: "dev"))
        try await outbox.deliver(
            OutgoingMessage(
                kind: "verification", channel: .email, recipient: "dev@example.com", subject: "Your code: 123456",
                text: "Your code is\n\n    123456\n", html: "<p>123456</p>", messageID: "<x@localhost>"))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 1 && files[0].hasSuffix(".eml"))
        let eml = try String(contentsOf: directory.appendingPathComponent(files[0]), encoding: .utf8)
        #expect(eml.contains("Message-ID: <x@localhost>") && eml.contains("multipart/alternative"))
        #expect(logs.all.contains { $0.contains("dev@example.com") && $0.contains("123456") })
    }
}

@Suite("Transport security")
struct TransportSecurityTests {
    @Test("The SMS gateway takes https, and plain http only to this machine; SMTP requires TLS except to loopback")
    func requiresTLS() throws {
        var configuration = ServerConfiguration()
        configuration.smtpURL = "smtp://127.0.0.1:2525"
        configuration.smsURL = "http://gateway.example.com/sms"
        #expect(throws: (any Error).self) { try GatehouseServer.transports(configuration, logger: Logger(label: "test")) }
        configuration.smsURL = "http://token@127.0.0.1:9/sms"
        #expect(throws: Never.self) { try GatehouseServer.transports(configuration, logger: Logger(label: "test")) }
        configuration.smsURL = "https://token@gateway.example.com/sms"
        #expect(throws: Never.self) { try GatehouseServer.transports(configuration, logger: Logger(label: "test")) }
        #expect(try SMTPConfiguration.parse(url: "smtp://mail.example.com").security == .startTLSRequired)
    }
}

@Suite("No SMS gateway")
struct NoSMSGatewayTests {
    @Test("Without a gateway SMS sign-in is refused, not written where nobody reads it; --dev-outbox allows it")
    func refusedWithoutGateway() async throws {
        for dev in [false, true] {
            let server = try await TestServer.start(.sqlite, transports: [.email: CapturedMail()]) { $0.devOutbox = dev }
            try await server.createClient(id: "sms", settings: ["email_verification=off", "methods=password,email_otp,sms_otp"])
            try await server.withRouter { client in
                let sms = try await client.json(.post, "/v1/otp", ["client_id": "sms", "phone": "+4790012345"])
                if dev {
                    #expect(sms.status == .accepted, "\(sms.text)")
                } else {
                    #expect(sms.status == .forbidden && sms.string("code") == "not_enabled", "\(sms.text)")
                }
                // Email codes are unaffected.
                #expect(try await client.json(.post, "/v1/otp", ["client_id": "sms", "email": "a@example.com"]).status == .accepted)
            }
        }
    }
}

@Suite("No mail server")
struct NoMailServerTests {
    @Test(
        "Without SMTP and without --dev-outbox, mail waits in the outbox unsent (no files, no codes in the log) and is delivered once asked for"
    )
    func mailWaits() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gh-nomail-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ServerConfiguration()
        configuration.outboxDir = directory.path
        let logs = CapturedLogs()
        let held = try GatehouseServer.transports(configuration, logger: logs.logger(label: "test"))
        #expect(held.isEmpty)
        #expect(logs.all.contains { $0.contains("NOT SENT") })
        var development = configuration
        development.devOutbox = true
        let developmentTransports = try GatehouseServer.transports(development, logger: logs.logger(label: "test"))
        let server = try await TestServer.start(.sqlite, transports: held)
        try await server.createClient(id: TestServer.openClient, settings: ["email_verification=off"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            #expect(
                try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email]).status == .accepted)
            #expect(try await server.deliverMail() == 0)
            let pending = try await server.persistence.read { try await $0.outbox.list(status: .pending, limit: 10) }
            #expect(pending.count == 1 && pending[0].attempts == 0)
            #expect(!FileManager.default.fileExists(atPath: directory.path))

            let delivery = OutboxDelivery(
                services: server.server.services, renderer: server.server.templates, transports: developmentTransports)
            #expect(try await delivery.runOnce() == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 1)
        }
    }
}
