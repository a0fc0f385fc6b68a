import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one HTTP request. Injectable so apps can add their own networking and tests can intercept.
public protocol HTTPTransport: Sendable {
    /// Performs `request` and returns the body and the HTTP response.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// The default transport, on `URLSession`.
public struct URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// Creates a transport on `session` (the shared session by default).
    public init(session: URLSession = .shared) { self.session = session }

    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }
}
