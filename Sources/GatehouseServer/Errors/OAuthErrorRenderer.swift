import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// RFC 6749 §5.2 error bodies for the `/oauth` endpoints.
struct OAuthErrorRenderer: ErrorRenderer {
    private static let encoder = WireCoding.encoder()

    func render(_ error: GatehouseError, request: Request) -> Response {
        let status = HTTPStatusMapping.status(for: error.category)
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if error.category == .clientAuthentication { headers[.wwwAuthenticate] = "Basic realm=\"gatehouse\"" }
        let body = OAuthErrorBody(
            error: Self.oauthCode(for: error),
            errorDescription: error.category == .internalFailure ? nil : error.detail)
        let data = (try? Self.encoder.encode(body)) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    /// The RFC 6749 vocabulary: OAuth errors keep their own code; the rest map onto the nearest one.
    static func oauthCode(for error: GatehouseError) -> String {
        switch error.category {
        case .oauth: error.code.rawValue
        case .clientAuthentication: "invalid_client"
        case .unavailable: "temporarily_unavailable"
        case .internalFailure: "server_error"
        default: error.code == .invalidClient ? "invalid_client" : "invalid_request"
        }
    }
}
