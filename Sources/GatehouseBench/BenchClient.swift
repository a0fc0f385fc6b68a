import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The HTTP calls the scenarios make, on a shared async-http-client pool.
public struct BenchClient: Sendable {
    public let http: HTTPClient
    public let baseURL: String

    public init(http: HTTPClient, baseURL: String) {
        self.http = http
        self.baseURL = baseURL
    }

    public struct Answer: Sendable {
        public var status: Int
        public var body: ByteBuffer
        public var headers: HTTPHeaders = [:]
        public var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] }
        public func string(_ key: String) -> String? { json?[key] as? String }
    }

    public func postJSON(
        _ path: String, _ body: [String: String], bearer: String? = nil, headers: [(String, String)] = []
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Content-Type", value: "application/json")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
        return try await send(request)
    }

    public func postJSON(_ path: String, document: String, bearer: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        request.body = .bytes(ByteBuffer(string: document))
        return try await send(request)
    }

    public func postForm(
        _ path: String, _ fields: [(String, String)], basic: (String, String)? = nil, headers: [(String, String)] = []
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        if let (id, secret) = basic {
            request.headers.add(name: "Authorization", value: "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString())
        }
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.1)" }
            .joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        return try await send(request)
    }

    public func get(
        _ path: String, bearer: String? = nil, cookie: String? = nil, headers: [(String, String)] = []
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        return try await send(request)
    }

    /// A GET of an absolute URL (a web-session link), whatever its host says.
    public func get(url: String) async throws -> Answer {
        try await send(HTTPClientRequest(url: url))
    }

    /// Sends a target's call.
    public func send(_ call: Target.Call) async throws -> Answer {
        switch call.body {
        case .json(let fields): try await postJSON(call.path, fields, bearer: call.bearer, headers: call.headers)
        case .rawJSON(let document): try await postJSON(call.path, document: document, bearer: call.bearer)
        case .form(let fields): try await postForm(call.path, fields, basic: call.basic, headers: call.headers)
        case .none: try await get(call.path, bearer: call.bearer, headers: call.headers)
        }
    }

    private func send(_ request: HTTPClientRequest) async throws -> Answer {
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 << 20)
        return Answer(status: Int(response.status.code), body: body, headers: response.headers)
    }
}
