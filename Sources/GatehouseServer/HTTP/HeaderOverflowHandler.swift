import Foundation
import GatehouseAPI
import NIOCore
import NIOHTTP1

/// Answers a request whose header fields overflow the decoder's limits with 431 and a problem document
/// (RFC 6585 §5), then closes the connection. Hummingbird answers every parse error with an empty 400;
/// this handler sits after the HTTP codec and takes the overflow before it gets there.
///
/// The response is written as bytes below the HTTP encoder: after a parse error the codec's state is
/// not to be trusted, and a fixed answer needs none of it. Written by hand because no listed package
/// turns a decoder error into a response.
final class HeaderOverflowHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    static let response: [UInt8] = {
        let problem = Problem(
            status: 431, code: .headersTooLarge, title: "Request header fields too large",
            detail: "The request's header fields are over 80 KiB. Send fewer or shorter headers.")
        let body = (try? WireCoding.encoder().encode(problem)) ?? Data()
        let head =
            "HTTP/1.1 431 Request Header Fields Too Large\r\n"
            + "Content-Type: application/problem+json\r\n"
            + "Content-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\n"
            + "X-Content-Type-Options: nosniff\r\n"
            + "Connection: close\r\n\r\n"
        return Array(head.utf8) + Array(body)
    }()

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError, parserError == .headerOverflow,
            let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
        else {
            context.fireErrorCaught(error)
            return
        }
        let bytes = context.channel.allocator.buffer(bytes: Self.response)
        let channel = context.channel
        encoder.writeAndFlush(NIOAny(bytes)).whenComplete { _ in channel.close(promise: nil) }
    }
}
