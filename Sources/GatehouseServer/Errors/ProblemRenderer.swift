import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat

/// RFC 9457 problem documents, the shape of every `/v1` error.
struct ProblemRenderer: ErrorRenderer {
    private static let encoder = WireCoding.encoder()

    func render(_ error: GatehouseError, request: Request) -> Response { Self.response(error) }

    static func response(_ error: GatehouseError) -> Response {
        let status = HTTPStatusMapping.status(for: error.category)
        // Debug builds (the tests) stop at a code the SDK's shared list does not have.
        assert(
            ErrorCode.serverCodes.contains(error.code) && error.fieldErrors.allSatisfy { ErrorCode.serverCodes.contains($0.code) },
            "\(error.code) is not in ErrorCode.serverCodes")
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        // RFC 6750 §3: a missing token gets the bare challenge, a bad one says why.
        if let nonce = error.dpopNonce { headers[DPoPHeaders.nonce] = nonce }
        if error.dpopChallenge {
            headers[.wwwAuthenticate] = DPoPHeaders.challenge(error: error.code)
        } else if error.code == .unauthorized {
            headers[.wwwAuthenticate] = "Bearer realm=\"gatehouse\""
        } else if error.code == .invalidToken || error.code == .sessionRevoked {
            headers[.wwwAuthenticate] = "Bearer realm=\"gatehouse\", error=\"invalid_token\""
        }
        let problem = Problem(
            status: Int(status.code), code: error.code, title: error.title, detail: error.detail,
            errors: error.fieldErrors.isEmpty ? nil : error.fieldErrors, remainingAttempts: error.remainingAttempts,
            failureCounts: error.failureCounts, flowId: error.pendingFlow?.id.uuidString.lowercased(),
            factors: error.pendingFlow?.factors, enrol: error.pendingFlow?.enrol == true ? true : nil)
        let body = (try? encoder.encode(problem)) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: body)))
    }
}
