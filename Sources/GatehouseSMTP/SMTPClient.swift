// Hand-written SMTP client: none of the Swift packages available to Gatehouse (SwiftNIO, NIOSSL,
// NIO extras, Hummingbird, AsyncHTTPClient, …) speaks SMTP, so the protocol (RFC 5321, STARTTLS
// per RFC 3207, AUTH PLAIN/LOGIN per RFC 4954/4616) is implemented here on top of SwiftNIO.

import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Delivers ``MailMessage`` values to one SMTP relay.
///
/// Each ``send(_:)`` opens its own connection and closes it before returning, whatever the
/// outcome. That costs a handshake per message but keeps the client stateless: nothing to pool,
/// no idle connections for the relay to drop, and a failure never affects the next message. An
/// outbox dispatcher sending a few messages a second does not need more.
///
/// The conversation is greeting → EHLO (HELO if EHLO is refused) → STARTTLS and EHLO again when
/// offered or required → AUTH PLAIN (LOGIN when only that is offered) when credentials are set →
/// MAIL FROM → RCPT TO for each recipient → DATA → QUIT. Every step, and connecting, is limited by
/// ``SMTPConfiguration/timeout``.
///
/// Logs carry the relay, the Message-ID and recipient domains only; never credentials, addresses
/// in full, or message content.
public struct SMTPClient: Sendable {
    /// The relay and how to reach it.
    public let configuration: SMTPConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let sslContext: NIOSSLContext
    private let logger: Logger
    private let encoder = MIMEEncoder()

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - configuration: The relay and how to reach it.
    ///   - eventLoopGroup: Where connections run; the process-wide singleton by default.
    ///   - logger: Receives debug-level progress and failure summaries.
    /// - Throws: ``SMTPError`` of kind ``SMTPError/Kind-swift.enum/invalidConfiguration`` when the
    ///   configuration cannot work or its TLS settings cannot be loaded (for example a missing
    ///   trust-root file), so problems show at start-up rather than on the first message.
    public init(
        configuration: SMTPConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "gatehouse.smtp")
    ) throws {
        try configuration.validate()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = configuration.tls.certificateVerification
        tls.trustRoots = configuration.tls.trustRoots
        tls.additionalTrustRoots = configuration.tls.additionalTrustRoots
        do {
            self.sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw SMTPError.invalidConfiguration("the TLS settings cannot be loaded: \(error)")
        }
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Sends `message` and returns once the server has accepted it.
    ///
    /// The message is encoded before connecting, so an invalid message fails without network
    /// traffic. If any recipient is refused nothing is sent (no partial delivery), and the error
    /// names the refused step. Once the server has accepted the data, errors while quitting are
    /// ignored: the message is delivered and must not be retried.
    ///
    /// Cancelling the calling task closes the connection and throws `CancellationError`.
    ///
    /// - Throws: ``SMTPError``; check ``SMTPError/isPermanent`` to choose between retrying and
    ///   dead-lettering. A timeout after the data was sent may mean the server accepted the
    ///   message anyway; the stable ``MailMessage/messageID`` lets a duplicate be recognised.
    public func send(_ message: MailMessage) async throws {
        let encoded = try encoder.encode(message)
        let data = SMTPDataEncoder.encode(encoded.text)

        var logger = self.logger
        logger[metadataKey: "smtp.server"] = "\(configuration.host):\(configuration.port)"
        logger[metadataKey: "smtp.message_id"] = .string(message.messageID)
        logger[metadataKey: "smtp.recipient_domains"] = .string(
            Set(message.to.map(\.domain)).sorted().joined(separator: ",")
        )

        let connection: SMTPConnection
        do {
            connection = try await SMTPConnection.connect(
                host: configuration.host,
                port: configuration.port,
                timeout: TimeAmount(configuration.timeout),
                group: eventLoopGroup,
                implicitTLS: configuration.security == .implicitTLS ? sslContext : nil,
                serverHostname: serverNameIndication
            )
        } catch {
            log(error, logger)
            throw error
        }

        do {
            try await withTaskCancellationHandler {
                try await converse(over: connection, message: message, data: data, logger: logger)
            } onCancel: {
                connection.channel.close(promise: nil)
            }
        } catch {
            await connection.close()
            try Task.checkCancellation()
            log(error, logger)
            throw error
        }
        await connection.close()
    }

    private func converse(
        over connection: SMTPConnection,
        message: MailMessage,
        data: ByteBuffer,
        logger: Logger
    ) async throws {
        try expect(await connection.greeting(), 220, .greeting)
        var extensions = try await hello(connection)
        var encrypted = configuration.security == .implicitTLS

        do {
            if !encrypted {
                if extensions.startTLS {
                    // No fallback from here on: a failed upgrade fails the delivery.
                    try expect(await connection.command("STARTTLS", step: .startTLS), 220, .startTLS)
                    try await connection.startTLS(sslContext: sslContext, serverHostname: serverNameIndication)
                    encrypted = true
                    // RFC 3207 §4.2: forget everything learnt before TLS and ask again.
                    extensions = try await hello(connection)
                } else if configuration.security == .startTLSRequired {
                    throw SMTPError(.startTLSUnavailable, step: .startTLS, detail: "the server does not offer STARTTLS")
                }
            }
            logger.debug("SMTP session ready", metadata: ["smtp.tls": "\(encrypted)"])

            if let credentials = configuration.credentials {
                guard encrypted || Self.isLoopback(configuration.host) else {
                    throw SMTPError(
                        .insecureCredentials,
                        step: .authentication,
                        detail: "refusing to send credentials over an unencrypted connection to a non-loopback host"
                    )
                }
                try await authenticate(connection, credentials: credentials, mechanisms: extensions.authMechanisms)
            }

            if let limit = extensions.maximumSize, limit > 0, data.readableBytes > limit {
                throw SMTPError(
                    .messageTooLarge,
                    step: .mailFrom,
                    detail: "the message is \(data.readableBytes) bytes; the server accepts at most \(limit)"
                )
            }
            let sizeParameter = extensions.maximumSize == nil ? "" : " SIZE=\(data.readableBytes)"
            try expect(
                await connection.command("MAIL FROM:<\(message.from.address)>\(sizeParameter)", step: .mailFrom),
                250,
                .mailFrom
            )
            for recipient in message.to {
                try expect(
                    await connection.command("RCPT TO:<\(recipient.address)>", step: .recipient), [250, 251], .recipient
                )
            }
            try expect(await connection.command("DATA", step: .data), 354, .data)
        } catch let error as SMTPError where Self.connectionIsUsable(after: error) {
            // The server is still listening: say goodbye so it does not log an aborted session.
            _ = try? await connection.command("QUIT", step: .quit)
            throw error
        }

        try expect(await connection.send(data, step: .message), 250, .message)
        logger.debug("SMTP message accepted")
        // Delivered: a failure from here on must not make the caller retry.
        _ = try? await connection.command("QUIT", step: .quit)
    }

    /// EHLO, or HELO when the server refuses EHLO (RFC 5321 §3.2); HELO means no extensions.
    private func hello(_ connection: SMTPConnection) async throws -> SMTPExtensions {
        let ehlo = try await connection.command("EHLO \(configuration.heloName)", step: .ehlo)
        if ehlo.code == 250 { return SMTPExtensions(ehloReply: ehlo) }
        // Only a permanent refusal means "no ESMTP here"; a 4xx is a reason to stop and retry later.
        guard (500..<600).contains(ehlo.code) else {
            try expect(ehlo, 250, .ehlo)
            return SMTPExtensions()
        }
        try expect(await connection.command("HELO \(configuration.heloName)", step: .helo), 250, .helo)
        return SMTPExtensions()
    }

    /// AUTH PLAIN with an initial response, or AUTH LOGIN when only that is offered.
    private func authenticate(
        _ connection: SMTPConnection,
        credentials: SMTPConfiguration.Credentials,
        mechanisms: Set<String>
    ) async throws {
        if mechanisms.contains("PLAIN") {
            let token = Base64.encode(Array("\0\(credentials.username)\0\(credentials.password)".utf8))
            let reply = try await connection.command("AUTH PLAIN \(token)", step: .authentication)
            try expect(reply, 235, .authentication, redacting: [token])
        } else if mechanisms.contains("LOGIN") {
            let user = Base64.encode(Array(credentials.username.utf8))
            let password = Base64.encode(Array(credentials.password.utf8))
            try expect(await connection.command("AUTH LOGIN", step: .authentication), 334, .authentication)
            try expect(await connection.command(user, step: .authentication), 334, .authentication, redacting: [user])
            let reply = try await connection.command(password, step: .authentication)
            try expect(reply, 235, .authentication, redacting: [user, password])
        } else {
            let offered = mechanisms.isEmpty ? "none" : mechanisms.sorted().joined(separator: " ")
            throw SMTPError(
                .authenticationUnavailable,
                step: .authentication,
                detail: "credentials are set but the server offers neither AUTH PLAIN nor LOGIN (offered: \(offered))"
            )
        }
    }

    private func expect(_ reply: SMTPReply, _ code: Int, _ step: SMTPStep, redacting secrets: [String] = []) throws {
        try expect(reply, [code], step, redacting: secrets)
    }

    /// Throws a ``SMTPError/Kind-swift.enum/rejected`` error unless `reply` has one of `codes`.
    ///
    /// Some servers echo the command in error replies, so credential tokens are cut out of the text.
    private func expect(
        _ reply: SMTPReply, _ codes: Set<Int>, _ step: SMTPStep, redacting secrets: [String] = []
    )
        throws
    {
        guard !codes.contains(reply.code) else { return }
        var text = reply.text
        for secret in secrets where !secret.isEmpty {
            text = text.replacing(secret, with: "<redacted>")
        }
        let expected = codes.sorted().map(String.init).joined(separator: " or ")
        throw SMTPError(.rejected, step: step, replyCode: reply.code, replyText: text, detail: "expected \(expected)")
    }

    /// Logs kind, step and code only: reply text can quote addresses in full.
    private func log(_ error: any Error, _ logger: Logger) {
        guard let error = error as? SMTPError else {
            logger.debug("SMTP delivery failed", metadata: ["smtp.error": "\(type(of: error))"])
            return
        }
        logger.debug(
            "SMTP delivery failed",
            metadata: [
                "smtp.error": .string(error.kind.rawValue),
                "smtp.step": .string(error.step?.rawValue ?? "none"),
                "smtp.reply_code": .string(error.replyCode.map(String.init) ?? "none"),
                "smtp.permanent": "\(error.isPermanent)",
            ]
        )
    }

    /// SNI and certificate name checks need a host name; for an IP literal NIOSSL checks the
    /// certificate against the peer's address instead.
    private var serverNameIndication: String? {
        (try? SocketAddress(ipAddress: configuration.host, port: 0)) == nil ? configuration.host : nil
    }

    /// Whether a polite QUIT can still be sent after `error`.
    private static func connectionIsUsable(after error: SMTPError) -> Bool {
        switch error.kind {
        case .rejected, .startTLSUnavailable, .authenticationUnavailable, .insecureCredentials, .messageTooLarge:
            error.replyCode != 421  // 421: the server is closing the channel itself.
        default:
            false
        }
    }

    /// Whether `host` names this machine, where plaintext credentials cannot be sniffed on a network.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        if name.hasPrefix("::ffff:") { name.removeFirst("::ffff:".count) }
        if name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil } && octets[0] == "127"
    }
}
