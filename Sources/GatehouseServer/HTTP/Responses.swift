import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat

/// Building successful responses: JSON bodies and raw documents. Errors are the renderers' (`Errors/`).
enum Responses {
    private static let encoder = WireCoding.encoder()
    /// Parsed once, not per response.
    private static let pragma = HTTPField.Name("Pragma")!

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, noStore: Bool = false) throws -> Response {
        Response(
            status: status, headers: jsonHeaders(noStore: noStore), body: .init(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }

    /// The token, user and introspection answers, the hot ones: the same bytes, written without
    /// Foundation's encoder (``JSONBodyWriter``).
    static func json<T: JSONBodyEncodable>(_ value: T, status: HTTPResponse.Status = .ok, noStore: Bool = false) throws -> Response {
        Response(status: status, headers: jsonHeaders(noStore: noStore), body: .init(byteBuffer: try JSONBodyWriter.body(value)))
    }

    private static func jsonHeaders(noStore: Bool) -> HTTPFields {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if noStore {
            // RFC 6749 §5.1: token responses must not be cached; neither may a user's own data (`/v1/me…`),
            // which a shared cache would otherwise hand to the next caller.
            headers[.cacheControl] = "no-store"
            headers[pragma] = "no-cache"
        }
        return headers
    }

    /// A public document answered as is to everyone (discovery, the JWKS): built once, its headers and
    /// body buffer then shared by every response, so serving it copies and formats nothing.
    static func prepared(_ data: Data, contentType: String, cacheSeconds: Int) -> Response {
        raw(data, contentType: contentType, cacheSeconds: cacheSeconds)
    }

    static func raw(_ data: Data, contentType: String, cacheSeconds: Int? = nil, noStore: Bool = false) -> Response {
        var headers: HTTPFields = [.contentType: contentType]
        if let cacheSeconds { headers[.cacheControl] = "public, max-age=\(cacheSeconds)" }
        if noStore {
            headers[.cacheControl] = "no-store"
            headers[pragma] = "no-cache"
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    static func noContent() -> Response { Response(status: .noContent) }
}
