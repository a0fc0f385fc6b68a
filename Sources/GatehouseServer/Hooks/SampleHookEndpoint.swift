import Foundation
import GatehouseAPI
import HTTPTypes
import Hummingbird
import Logging
import NIOFoundationEssentialsCompat

/// `gatehouse hooks sample-endpoint`: a hook that allows everything (adding the given claims at token
/// issue) and a webhook receiver that takes everything, to try the contract against and to measure a
/// hook call in the benchmark. It checks no signature: it is not a receiver to copy into production.
public enum SampleHookEndpoint {
    public static func run(host: String, port: Int, claims: [String: String], logger: Logger) async throws {
        let allow = ByteBuffer(string: #"{"decision":"allow"}"#)
        let withClaims = ByteBuffer(
            data: try JSONEncoder().encode(SampleAnswer(decision: "allow", claims: claims.isEmpty ? nil : claims)))
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let type = (try? JSONDecoder().decode(SampleEvent.self, from: body))?.type ?? "?"
            logger.debug("hook", metadata: ["type": "\(type)"])
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: type == HookPointName.tokenIssue ? withClaims : allow))
        }
        router.post("/events") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let type = (try? JSONDecoder().decode(SampleEvent.self, from: body))?.type ?? "?"
            logger.info("webhook", metadata: ["type": "\(type)", "id": "\(request.headers[HTTPField.Name("webhook-id")!] ?? "-")"])
            return Response(status: .noContent)
        }
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)), logger: logger)
        try await app.runService()
    }

    private enum HookPointName { static let tokenIssue = "token_issue" }

    private struct SampleEvent: Decodable { var type: String }
    private struct SampleAnswer: Encodable {
        var decision: String
        var claims: [String: String]?
    }
}
