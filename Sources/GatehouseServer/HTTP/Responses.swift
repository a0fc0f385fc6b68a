import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Building responses: JSON bodies, problem documents, the headers every answer carries.
enum Responses {
    private static let encoder = WireCoding.encoder()

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, noStore: Bool = false) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if noStore {
            // RFC 6749 §5.1: token responses must not be cached.
            headers[.cacheControl] = "no-store"
            headers[HTTPField.Name("Pragma")!] = "no-cache"
        }
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }

    static func raw(_ data: Data, contentType: String, cacheSeconds: Int? = nil) -> Response {
        var headers: HTTPFields = [.contentType: contentType]
        if let cacheSeconds { headers[.cacheControl] = "public, max-age=\(cacheSeconds)" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    static func noContent() -> Response { Response(status: .noContent) }

    static func problem(_ error: GatehouseError) -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        // RFC 6750 §3: a missing token gets the bare challenge, a bad one says why.
        if error.code == .unauthorized {
            headers[.wwwAuthenticate] = "Bearer realm=\"gatehouse\""
        } else if error.code == .invalidToken || error.code == .sessionRevoked {
            headers[.wwwAuthenticate] = "Bearer realm=\"gatehouse\", error=\"invalid_token\""
        }
        let body = (try? encoder.encode(error.problem)) ?? Data()
        return Response(
            status: .init(code: error.status), headers: headers, body: .init(byteBuffer: ByteBuffer(data: body)))
    }

    static func oauth(_ error: OAuthError) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if error.status == 401 { headers[.wwwAuthenticate] = "Basic realm=\"gatehouse\"" }
        let body = (try? encoder.encode(OAuthErrorBody(error: error.error, errorDescription: error.errorDescription))) ?? Data()
        return Response(
            status: .init(code: error.status), headers: headers, body: .init(byteBuffer: ByteBuffer(data: body)))
    }
}
