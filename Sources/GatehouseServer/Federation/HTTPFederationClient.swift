import AsyncHTTPClient
import Foundation
import GatehouseCore
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1

/// Talks to providers: https only (http to this machine, for tests and sidecars), no redirects,
/// `timeout` (``ServerConfiguration/providerTimeout``) and 256 KiB at most.
struct HTTPFederationClient: FederationHTTP {
    let timeout: Duration

    func send(_ request: FederationRequest) async throws -> (status: Int, body: Data) {
        guard let parsed = URL(string: request.url), let host = parsed.host,
            parsed.scheme == "https" || (parsed.scheme == "http" && Loopback.contains(host))
        else {
            // Only scheme, host and path: a query may hold a token or the app secret (Facebook's debug_token).
            throw SocialProvidersError("refusing to call \(request.url.split(separator: "?").first ?? ""): not https")
        }
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let (status, body) = try await HookHTTPClient.send(
            outgoing, operation: "provider " + host, timeout: timeout, maxBytes: 256 * 1024)
        return (status, Data(buffer: body))
    }
}
