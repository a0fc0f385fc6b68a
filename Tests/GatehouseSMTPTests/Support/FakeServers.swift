import NIOCore
import NIOPosix

/// A TCP listener on 127.0.0.1 that never answers (or only greets), for timeout tests that must
/// not depend on Python.
struct SilentServer {
    let channel: any Channel
    var port: Int { channel.localAddress!.port! }

    /// Starts listening on a free port; with `greeting` it sends that line and then falls silent.
    static func start(greeting: String? = nil) async throws -> SilentServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    if let greeting {
                        try child.pipeline.syncOperations.addHandler(Greeter(line: greeting))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return SilentServer(channel: channel)
    }

    func stop() async {
        try? await channel.close()
    }
}

/// Writes one line once the connection is active (writes from the initializer would come too early).
private final class Greeter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let line: String

    init(line: String) { self.line = line }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: line + "\r\n")), promise: nil)
        context.fireChannelActive()
    }
}

/// A port on 127.0.0.1 that was free a moment ago and has nothing listening now.
func closedPort() async throws -> Int {
    let server = try await SilentServer.start()
    let port = server.port
    await server.stop()
    return port
}
