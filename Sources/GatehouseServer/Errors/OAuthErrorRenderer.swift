import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat

/// RFC 6749 §5.2 error bodies for the `/oauth` endpoints.
struct OAuthErrorRenderer: ErrorRenderer {
    private static let encoder = WireCoding.encoder()

    func render(_ error: GatehouseError, request: Request) -> Response {
        let status = HTTPStatusMapping.status(for: error.category)
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if error.category == .clientAuthentication { headers[.wwwAuthenticate] = "Basic realm=\"gatehouse\"" }
        if let nonce = error.dpopNonce { headers[DPoPHeaders.nonce] = nonce }
        let code = Self.oauthCode(for: error)
        assert(ErrorCode.serverCodes.contains(code), "\(code) is not in ErrorCode.serverCodes")
        let body = OAuthErrorBody(
            error: code.rawValue,
            errorDescription: error.category == .internalFailure ? nil : error.detail)
        let data = (try? Self.encoder.encode(body)) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    /// The RFC 6749 vocabulary: OAuth errors keep their own code; the rest map onto the nearest one.
    static func oauthCode(for error: GatehouseError) -> ErrorCode {
        switch error.category {
        case .oauth: error.code
        case .clientAuthentication: ErrorCode.invalidClient
        case .unavailable: ErrorCode.temporarilyUnavailable
        case .internalFailure: ErrorCode.serverError
        default: error.code == .invalidClient ? ErrorCode.invalidClient : ErrorCode.invalidRequest
        }
    }
}
