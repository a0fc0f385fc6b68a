import AsyncHTTPClient
import Foundation
import GatehouseCore
import NIOCore

/// Fetches providers' discovery documents and keys: https only (http to this machine, for tests and
/// sidecars), no redirects, 5 s and 256 KiB at most.
struct HTTPFederationClient: FederationHTTP {
    func get(_ url: String) async throws -> Data {
        guard let parsed = URL(string: url), let host = parsed.host,
            parsed.scheme == "https" || (parsed.scheme == "http" && Loopback.contains(host))
        else { throw SocialProvidersError("refusing to fetch \(url): not https") }
        let (status, body) = try await HookHTTPClient.send(HTTPClientRequest(url: url), timeout: .seconds(5), maxBytes: 256 * 1024)
        guard (200..<300).contains(status) else { throw HookCallError.status(status) }
        return Data(buffer: body)
    }
}
