import Foundation

/// One server-to-provider call: keys, discovery, the web flow's code exchange, token checks and
/// profile reads.
public struct FederationRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: Data?

    public init(method: String = "GET", url: String, headers: [(String, String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// A form POST (`application/x-www-form-urlencoded`), as OAuth token and introspection endpoints take.
    public static func form(_ url: String, _ fields: [(String, String)], headers: [(String, String)] = []) -> FederationRequest {
        FederationRequest(
            method: "POST", url: url,
            headers: headers + [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Data(FormEncoding.encode(fields).utf8))
    }
}

/// How the core talks to providers. The server's implementation refuses anything but https (and
/// loopback http), follows no redirect, and bounds time and size.
public protocol FederationHTTP: Sendable {
    /// The answer's status and body, whatever the status.
    func send(_ request: FederationRequest) async throws -> (status: Int, body: Data)
}

extension FederationHTTP {
    /// A GET that answers the body of a 2xx, or throws.
    public func get(_ url: String) async throws -> Data {
        let (status, body) = try await send(FederationRequest(url: url))
        guard (200..<300).contains(status) else { throw ProviderCallError.status(status) }
        return body
    }
}

/// A provider answered something other than what its API promises.
public enum ProviderCallError: Error, Equatable, Sendable {
    case status(Int)
    case malformed(String)
}

/// `application/x-www-form-urlencoded` (WHATWG URL §5): only unreserved characters stay as they are.
public enum FormEncoding {
    static let allowed: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        set.insert(charactersIn: "-._*")
        return set
    }()

    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }
}
