import Hummingbird
import Logging

/// The bench's floor: one trivial Hummingbird route (`GET /floor`, a fixed 16-byte JSON body) with no
/// middleware, served by Hummingbird's defaults on this machine's cores. JWKS and discovery are compared
/// with its server CPU per request in the same run, so what Gatehouse adds on top of the HTTP stack
/// itself (middleware, routing, logging) is what the ratio shows.
enum FloorServer {
    static func run(port: Int) async throws {
        let router = Router()
        let body = ByteBuffer(string: #"{"floor":true}"# + "\n\n")
        router.get("/floor") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        var logger = Logger(label: "gatehouse-bench-floor")
        logger.logLevel = .warning
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        try await app.runService()
    }
}
