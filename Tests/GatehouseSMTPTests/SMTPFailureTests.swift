import Foundation
import Testing

@testable import GatehouseSMTP
import NIOSSL

/// Failures that need no SMTP server: refused connections, silent servers, cancellation, and
/// messages rejected before any connection is made.
struct SMTPFailureTests {
    let message = MailMessage(
        from: MailAddress("noreply@gatehouse.test"),
        to: [MailAddress("ada@example.test")],
        subject: "Hi",
        textBody: "Hi",
        messageID: "<failure-test@gatehouse.test>"
    )

    func client(port: Int, timeout: Duration) throws -> SMTPClient {
        try SMTPClient(configuration: SMTPConfiguration(host: "127.0.0.1", port: port, timeout: timeout))
    }

    @Test func connectionRefusedIsQuickAndNotPermanent() async throws {
        let port = try await closedPort()
        // A connect timeout far above anything a loaded host needs to be refused: a CI run loaded by
        // the whole suite took 10.7 s to report the refusal against a timeout of 10 s and a bound of 9.
        let client = try client(port: port, timeout: .seconds(120))
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await #require(throws: SMTPError.self) { try await client.send(message) }
        #expect(error.kind == .connectionFailed)
        #expect(error.step == .connect)
        #expect(!error.isPermanent)
        // Not a speed check: only that it did not sit out the 120 s connect timeout (then the kind
        // above would be `.timeout`, too).
        #expect(clock.now - start < .seconds(60))
    }

    @Test func serverThatNeverAnswersTimesOutWithinTheConfiguredTimeout() async throws {
        let server = try await SilentServer.start()
        // Seconds, not milliseconds: the connect shares the timeout, and a loaded run can hold a loopback
        // connect long enough that a short one would end it at `.connect` instead of `.greeting`.
        let client = try client(port: server.port, timeout: .seconds(2))
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: SMTPError.self) { try await client.send(message) }
        let elapsed = clock.now - start
        await server.stop()
        #expect(error?.kind == .timeout)
        #expect(error?.step == .greeting)
        #expect(error?.isPermanent == false)
        #expect(elapsed >= .milliseconds(1900))
        // Not a speed check: only that the 2 s timeout ended a wait that would otherwise never end.
        #expect(elapsed < .seconds(20))
    }

    @Test func serverThatStopsAfterGreetingTimesOutAtEHLO() async throws {
        let server = try await SilentServer.start(greeting: "220 silent.test ESMTP")
        let error = await #expect(throws: SMTPError.self) {
            try await client(port: server.port, timeout: .seconds(2)).send(message)
        }
        await server.stop()
        #expect(error?.kind == .timeout)
        #expect(error?.step == .ehlo)
    }

    @Test func cancellingTheTaskClosesTheConnectionPromptly() async throws {
        let server = try await SilentServer.start(greeting: "220 silent.test ESMTP")
        let client = try client(port: server.port, timeout: .seconds(30))
        let message = self.message
        let task = Task { try await client.send(message) }
        try await Task.sleep(for: .milliseconds(200))
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Not a speed check: only that cancelling did not sit out the 30 s timeout.
        #expect(clock.now - start < .seconds(20))
        await server.stop()
    }

    @Test func headerInjectionFailsPermanentlyWithoutConnecting() async throws {
        // Port 9 on loopback has nothing listening; an attempt to connect would fail differently.
        var bad = message
        bad.subject = "Hello\r\nBcc: victim@example.test"
        let error = try await #require(throws: SMTPError.self) {
            try await client(port: 9, timeout: .seconds(1)).send(bad)
        }
        #expect(error.kind == .invalidMessage)
        #expect(error.step == nil)
        #expect(error.isPermanent)
    }

    @Test func credentialsAreNotSentInPlaintextToARemoteHost() {
        #expect(SMTPClient.isLoopback("localhost"))
        #expect(SMTPClient.isLoopback("LOCALHOST."))
        #expect(SMTPClient.isLoopback("127.0.0.1"))
        #expect(SMTPClient.isLoopback("127.8.9.10"))
        #expect(SMTPClient.isLoopback("::1"))
        #expect(SMTPClient.isLoopback("::ffff:127.0.0.1"))
        #expect(!SMTPClient.isLoopback("128.0.0.1"))
        #expect(!SMTPClient.isLoopback("127.0.0.1.evil.test"))
        #expect(!SMTPClient.isLoopback("localhost.evil.test"))
        #expect(!SMTPClient.isLoopback("mail.example.com"))
        #expect(!SMTPClient.isLoopback("::2"))
    }

    @Test func invalidConfigurationFailsAtInit() {
        #expect(throws: SMTPError.self) { try SMTPClient(configuration: SMTPConfiguration(host: "", port: 25)) }
        #expect(throws: SMTPError.self) { try SMTPClient(configuration: SMTPConfiguration(host: "h", port: 0)) }
        #expect(throws: SMTPError.self) {
            try SMTPClient(configuration: SMTPConfiguration(host: "h", port: 25, heloName: "two words"))
        }
        #expect(throws: SMTPError.self) {
            try SMTPClient(configuration: SMTPConfiguration(host: "h", port: 25, timeout: .zero))
        }
        #expect(throws: SMTPError.self) {
            try SMTPClient(
                configuration: SMTPConfiguration(
                    host: "h",
                    port: 25,
                    tls: .init(additionalTrustRoots: [.file("/nonexistent/ca.pem")])
                )
            )
        }
    }
}
