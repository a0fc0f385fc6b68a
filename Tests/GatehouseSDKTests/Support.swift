import Foundation
import Gatehouse
import GatehouseTesting
import HummingbirdTesting
import Synchronization
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
    import GatehouseServer
#endif

/// Runs `body` against the server listening on a real socket.
func withLiveServer(_ server: TestServer, _ body: @escaping @Sendable (URL) async throws -> Void) async throws {
    try await server.runLive(body)
}

/// URLSession underneath, counting refresh requests, and able to play "network down" for them. A
/// refresh the server sent back for its DPoP nonce (`use_dpop_nonce`, answered by the SDK's one retry)
/// is the same refresh, not another.
final class CountingTransport: HTTPTransport {
    private let base = URLSessionTransport()
    private let state = Mutex<(refreshes: Int, offline: Bool)>((0, false))

    var refreshes: Int { state.withLock { $0.refreshes } }
    func setOffline(_ offline: Bool) { state.withLock { $0.offline = offline } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard request.url?.path == "/oauth/token" else { return try await base.send(request) }
        if state.withLock({ $0.offline }) { throw URLError(.notConnectedToInternet) }
        let (data, response) = try await base.send(request)
        if !String(decoding: data, as: UTF8.self).contains("use_dpop_nonce") { state.withLock { $0.refreshes += 1 } }
        return (data, response)
    }
}

/// Collects a client's events.
actor EventLog {
    private(set) var events: [AuthEvent] = []
    func append(_ event: AuthEvent) { events.append(event) }

    /// The events once `event` is among them (or when ``eventually(within:every:_:)`` gives up): the
    /// copy runs in a task of its own, which a loaded machine may run late.
    func events(once event: AuthEvent) async throws -> [AuthEvent] {
        try await eventually { events.contains(event) ? events : nil } ?? events
    }
}

func record(_ client: AuthClient) async -> (EventLog, Task<Void, Never>) {
    let log = EventLog()
    let stream = await client.events()
    let task = Task {
        for await event in stream { await log.append(event) }
    }
    return (log, task)
}

func meRequest(_ base: URL) -> URLRequest {
    URLRequest(url: base.appendingPathComponent("/v1/me"))
}

/// Renews the session and returns its refresh token, read from the client's store: the SDK's public
/// `Session` leaves the refresh token out, and these tests present it to the server themselves.
func refreshedToken(_ client: AuthClient) async throws -> String {
    try await client.refreshSession()
    return try #require(try await client.configuration.store.load()?.refreshToken)
}
