import Foundation
import GatehouseServer
import Hummingbird

/// A live server on a free port, for clients outside the process (a browser, a Python library).
public struct LiveServer: Sendable {
    public let server: TestServer
    /// `http://127.0.0.1:PORT`, also the server's public URL (the issuer).
    public let base: String
    let running: Task<Void, any Error>

    public static func start(_ configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in }) async throws -> LiveServer {
        let port = try await HookServer.freePort()
        let base = "http://127.0.0.1:\(port)"
        let server = try await TestServer.start(.sqlite) {
            $0.port = port
            $0.publicURL = base
            configure(&$0)
        }
        let running = Task { try await server.server.makeApplication().runService(gracefulShutdownSignals: []) }
        do {
            try await TestServer.waitUntilLive(URL(string: base)!)
        } catch {
            running.cancel()
            _ = try? await running.value
            await server.stop()
            throw error
        }
        return LiveServer(server: server, base: base, running: running)
    }

    public func stop() async {
        running.cancel()
        _ = try? await running.value
        await server.stop()
    }
}
