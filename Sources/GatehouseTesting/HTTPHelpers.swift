import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOFoundationEssentialsCompat

/// Shorthand for the requests tests make again and again.
extension TestClientProtocol {
    public func json(
        _ method: HTTPRequest.Method, _ uri: String, _ body: [String: any Sendable]? = nil, bearer: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        var buffer: ByteBuffer?
        if let body {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(data: try JSONSerialization.data(withJSONObject: body))
        }
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        return try await HangWatch.track("\(method) \(uri)") {
            try await executeRequest(uri: uri, method: method, headers: headers, body: buffer)
        }
    }

    public func raw(
        _ method: HTTPRequest.Method, _ uri: String, body: [UInt8], contentType: String?, bearer: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let contentType { headers[.contentType] = contentType }
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        return try await HangWatch.track("\(method) \(uri)") {
            try await executeRequest(uri: uri, method: method, headers: headers, body: ByteBuffer(bytes: body))
        }
    }

    public func form(_ uri: String, _ fields: [String: String], basic: (String, String)? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let (id, secret) = basic {
            headers[.authorization] = "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
        }
        let body = fields.map { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)"
        }.joined(separator: "&")
        return try await HangWatch.track("POST \(uri)") {
            try await executeRequest(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
        }
    }
}

extension TestResponse {
    /// The body as a JSON object (empty when it is not one).
    public var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }

    public func string(_ key: String) -> String? { object[key] as? String }

    public var text: String { String(buffer: body) }
}
