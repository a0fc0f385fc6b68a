import NIOCore
import NIOPosix
import NIOSSL

/// One TCP (or TLS) connection to an SMTP server, with an async command/reply interface.
///
/// Sendable because it holds only the channel (Sendable) and a `NIOLoopBound` reference to the
/// handler, which traps unless it is used on the channel's event loop; every use below happens
/// inside `eventLoop.submit`/`flatSubmit`.
struct SMTPConnection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<SMTPClientHandler>
    private let timeout: TimeAmount

    private init(channel: any Channel, handler: NIOLoopBound<SMTPClientHandler>, timeout: TimeAmount) {
        self.channel = channel
        self.handler = handler
        self.timeout = timeout
    }

    /// Connects, adding TLS first when `implicitTLS` is given.
    static func connect(
        host: String,
        port: Int,
        timeout: TimeAmount,
        group: any EventLoopGroup,
        implicitTLS: NIOSSLContext?,
        serverHostname: String?
    ) async throws -> SMTPConnection {
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let implicitTLS {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: implicitTLS, serverHostname: serverHostname)
                        )
                    }
                    try channel.pipeline.syncOperations.addHandler(SMTPClientHandler())
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch ChannelError.connectTimeout {
            throw SMTPError(
                .timeout, step: .connect, detail: "connecting took longer than \(timeout.nanoseconds / 1_000_000) ms")
        } catch {
            throw SMTPError(.connectionFailed, step: .connect, detail: "could not connect: \(error)")
        }
        do {
            let handler = try await channel.eventLoop.submit {
                NIOLoopBound(
                    try channel.pipeline.syncOperations.handler(type: SMTPClientHandler.self),
                    eventLoop: channel.eventLoop
                )
            }.get()
            return SMTPConnection(channel: channel, handler: handler, timeout: timeout)
        } catch {
            try? await channel.close()
            throw SMTPError(.connectionClosed, step: .connect, detail: "the connection closed while it was set up")
        }
    }

    /// Waits for the greeting.
    func greeting() async throws -> SMTPReply {
        try await exchange(nil, step: .greeting)
    }

    /// Sends one command line (CRLF is added) and returns its reply.
    func command(_ line: String, step: SMTPStep) async throws -> SMTPReply {
        try await exchange(ByteBuffer(string: line + "\r\n"), step: step)
    }

    /// Sends pre-encoded bytes, such as the dot-stuffed message, and returns the reply.
    func send(_ bytes: ByteBuffer, step: SMTPStep) async throws -> SMTPReply {
        try await exchange(bytes, step: step)
    }

    /// Upgrades the connection after the server's `220` to STARTTLS; the handshake completes
    /// before the next command's bytes are written, within that command's timeout.
    func startTLS(sslContext: NIOSSLContext, serverHostname: String?) async throws {
        let handler = self.handler
        do {
            try await channel.eventLoop.submit {
                try handler.value.startTLS(sslContext: sslContext, serverHostname: serverHostname)
            }.get()
        } catch let error as SMTPError {
            throw error
        } catch {
            throw SMTPError(.connectionClosed, step: .startTLS, detail: "connection error: \(error)")
        }
    }

    /// Closes the channel; a channel that is already closed is fine.
    func close() async {
        try? await channel.close()
    }

    private func exchange(_ bytes: ByteBuffer?, step: SMTPStep) async throws -> SMTPReply {
        let handler = self.handler
        let timeout = self.timeout
        do {
            return try await channel.eventLoop.flatSubmit {
                handler.value.exchange(bytes, step: step, timeout: timeout)
            }.get()
        } catch let error as SMTPError {
            throw error
        } catch {
            throw SMTPError(.connectionClosed, step: step, detail: "connection error: \(error)")
        }
    }
}
