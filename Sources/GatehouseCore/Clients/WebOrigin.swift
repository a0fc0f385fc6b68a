import Foundation
import Synchronization

/// A web origin as browsers send it in `Origin`: `scheme://host[:port]`, lowercase, no path.
public enum WebOrigin {
    /// The normalized origin, or nil for anything that is not exactly an http(s) origin.
    public static func normalize(_ value: String) -> String? {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), ["https", "http"].contains(scheme),
            let host = url.host, !host.isEmpty, url.user == nil, url.query == nil, url.fragment == nil,
            url.path.isEmpty || url.path == "/", !value.hasSuffix("/")
        else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = url.port.flatMap { $0 == defaultPort ? nil : ":\($0)" } ?? ""
        return "\(scheme)://\(host.lowercased())\(port)"
    }
}

/// The origins some client allows, read from the clients and kept for a short while, so a browser's
/// preflight costs no database read and a `clients update` reaches every node within `ttl`.
public final class AllowedOrigins: Sendable {
    private let persistence: any Persistence
    private let clock: any WallClock
    private let ttl: TimeInterval
    private let cached = Mutex<(origins: Set<String>, loadedAt: Date)?>(nil)

    public init(persistence: any Persistence, clock: any WallClock, ttl: TimeInterval = 30) {
        self.persistence = persistence
        self.clock = clock
        self.ttl = ttl
    }

    /// Whether `origin` (as the browser sent it) is registered with some client.
    public func allows(_ origin: String) async -> Bool {
        guard let normalized = WebOrigin.normalize(origin) else { return false }
        let now = clock.now()
        if let hit = cached.withLock({ $0 }), now.timeIntervalSince(hit.loadedAt) < ttl {
            return hit.origins.contains(normalized)
        }
        // A failed read allows nothing rather than failing the request.
        guard let clients = try? await persistence.read({ try await $0.clients.list() }) else { return false }
        let origins = Set(clients.flatMap(\.settings.allowedOrigins))
        cached.withLock { $0 = (origins, now) }
        return origins.contains(normalized)
    }

    /// Forgets the cached list (after a client changed on this node).
    public func invalidate() { cached.withLock { $0 = nil } }
}
