import NIOCore
import NIOSSL

/// The channel handler behind ``SMTPConnection``: decodes replies and pairs each with the
/// command that is waiting for it, enforcing the per-step timeout.
///
/// SMTP without PIPELINING is strictly one command, one reply, so a single waiter suffices.
/// Everything here runs on the channel's event loop; `SMTPConnection` reaches it through
/// `NIOLoopBound`, which checks that on every access.
final class SMTPClientHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct Waiter {
        var promise: EventLoopPromise<SMTPReply>
        var timeout: Scheduled<Void>
        var step: SMTPStep
    }

    private var decoder = SMTPReplyDecoder()
    private var context: ChannelHandlerContext?
    /// Kept after removal so requests on a closed connection still get a failed future.
    private var eventLoop: (any EventLoop)?
    private var waiter: Waiter?
    /// Replies nobody asked for yet: normally just the greeting, which may beat the first request.
    private var unsolicited: [SMTPReply] = []
    /// The first failure; once set, the connection is unusable and every request fails with it.
    private var failure: SMTPError?
    private var step: SMTPStep = .greeting
    /// Set once STARTTLS inserts TLS, so handshake errors name that step whenever they surface.
    private var upgradedWithStartTLS = false

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.eventLoop = context.eventLoop
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(SMTPError(.connectionClosed, step: step, detail: "the SMTP handler was removed"))
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        decoder.append(&bytes)
        do {
            while let reply = try decoder.nextReply() {
                deliver(reply)
            }
        } catch {
            fail(classify(error))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(SMTPError(.connectionClosed, step: step, detail: "the server closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(classify(error))
        context.close(promise: nil)
    }

    /// Sends `command` (if any) and returns the next reply, failing with a timeout after `timeout`.
    ///
    /// With no command this waits for an unprompted reply: the greeting.
    func exchange(_ command: ByteBuffer?, step: SMTPStep, timeout: TimeAmount) -> EventLoopFuture<SMTPReply> {
        guard let eventLoop else {
            preconditionFailure("SMTPClientHandler used before it was added to a pipeline")
        }
        precondition(waiter == nil, "SMTP commands are not pipelined")
        self.step = step
        if let failure { return eventLoop.makeFailedFuture(failure.at(step)) }
        guard let context else {
            return eventLoop.makeFailedFuture(
                SMTPError(.connectionClosed, step: step, detail: "the connection is closed"))
        }
        if !unsolicited.isEmpty {
            let reply = unsolicited.removeFirst()
            // A reply that arrived before its command is only acceptable as the greeting or as a
            // server-initiated error such as "421 shutting down"; anything else would desynchronise
            // commands and replies, which could make a rejected message look accepted.
            if command == nil || !reply.isPositiveCompletion {
                return context.eventLoop.makeSucceededFuture(reply)
            }
            let error = SMTPError(.protocolViolation, step: step, detail: "the server sent a reply before the command")
            fail(error)
            context.close(promise: nil)
            return context.eventLoop.makeFailedFuture(error)
        }

        let promise = context.eventLoop.makePromise(of: SMTPReply.self)
        let timeoutTask = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            self.fail(SMTPError(.timeout, step: step, detail: "no reply within \(timeout.nanoseconds / 1_000_000) ms"))
            self.context?.close(promise: nil)
        }
        waiter = Waiter(promise: promise, timeout: timeoutTask, step: step)
        if let command {
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenFailure { error in
                self.fail(self.classify(error))
            }
            context.writeAndFlush(wrapOutboundOut(command), promise: written)
        }
        return promise.futureResult
    }

    /// Inserts TLS in front of this handler after the server's `220` to STARTTLS.
    ///
    /// Refuses if anything arrived after that reply: such bytes were sent in plaintext before the
    /// handshake and would otherwise be read as if they came over TLS (RFC 3207 §5, CVE-2011-0411).
    func startTLS(sslContext: NIOSSLContext, serverHostname: String?) throws {
        guard let context else {
            throw SMTPError(.connectionClosed, step: .startTLS, detail: "the connection is closed")
        }
        if let failure { throw failure.at(.startTLS) }
        guard !decoder.hasUnprocessedInput, unsolicited.isEmpty else {
            let error = SMTPError(
                .protocolViolation, step: .startTLS, detail: "the server sent data ahead of the TLS handshake")
            fail(error)
            context.close(promise: nil)
            throw error
        }
        do {
            let tls = try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname)
            upgradedWithStartTLS = true
            try context.pipeline.syncOperations.addHandler(tls, position: .first)
        } catch {
            let smtpError = classify(error)
            fail(smtpError)
            context.close(promise: nil)
            throw smtpError
        }
    }

    private func deliver(_ reply: SMTPReply) {
        guard let waiter else {
            unsolicited.append(reply)
            if unsolicited.count > 4 {
                fail(SMTPError(.protocolViolation, step: step, detail: "the server sent replies nobody asked for"))
                context?.close(promise: nil)
            }
            return
        }
        self.waiter = nil
        waiter.timeout.cancel()
        waiter.promise.succeed(reply)
    }

    /// Records the first failure and fails the waiting request with it; later failures are
    /// consequences (a timeout closes the channel, a TLS error is followed by inactivity).
    private func fail(_ error: SMTPError) {
        if failure == nil { failure = error }
        guard let waiter else { return }
        self.waiter = nil
        waiter.timeout.cancel()
        waiter.promise.fail(failure ?? error)
    }

    private func classify(_ error: any Error) -> SMTPError {
        switch error {
        case let error as SMTPError:
            return error.step == nil ? error.at(step) : error
        case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError:
            return SMTPError(.tls, step: upgradedWithStartTLS ? .startTLS : step, detail: "TLS failed: \(error)")
        default:
            return SMTPError(.connectionClosed, step: step, detail: "connection error: \(error)")
        }
    }
}

extension SMTPError {
    /// The same error attributed to `step` when it has no step yet.
    func at(_ step: SMTPStep) -> SMTPError {
        var copy = self
        if copy.step == nil { copy.step = step }
        return copy
    }
}
