import Foundation
import GatehouseCore

/// Where the data lives, parsed from `GATEHOUSE_DATABASE_URL`.
public enum DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    /// A PostgreSQL server on another machine is reached over TLS with its certificate and name checked
    /// (`sslmode=verify-full`, the default there); a weaker mode is refused unless
    /// `allowPlaintextToRemote` says the network is trusted. Loopback may use any mode.
    public init(_ raw: String, allowPlaintextToRemote: Bool = false) throws {
        if raw.hasPrefix("postgres://") || raw.hasPrefix("postgresql://") {
            self = .postgres(url: try Self.securePostgres(raw, allowPlaintextToRemote: allowPlaintextToRemote))
        } else if raw.hasPrefix("sqlite://") {
            let path = String(raw.dropFirst("sqlite://".count))
            guard !path.isEmpty else { throw DatabaseURLError.invalid("sqlite:// needs a file path") }
            self = .sqlite(path: path)
        } else {
            throw DatabaseURLError.invalid("use sqlite:///path/file.sqlite or postgres://user:pass@host:port/db")
        }
    }

    static func securePostgres(_ raw: String, allowPlaintextToRemote: Bool) throws -> String {
        guard var components = URLComponents(string: raw), let host = components.host, !host.isEmpty else {
            throw DatabaseURLError.invalid("postgres URL needs a host")
        }
        let loopback = Loopback.contains(host)
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value
        if loopback || allowPlaintextToRemote || mode == "verify-full" { return raw }
        guard mode == nil else {
            throw DatabaseURLError.invalid(
                "sslmode=\(mode ?? "") to \(host) can be intercepted; use sslmode=verify-full (the default for hosts other than this machine), or set GATEHOUSE_DATABASE_INSECURE=1 on a network you trust"
            )
        }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "sslmode", value: "verify-full")]
        return components.string ?? raw
    }

    /// Never prints the password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite://\(path)"
        case .postgres(let url):
            guard var components = URLComponents(string: url) else { return "postgres://…" }
            if components.password != nil { components.password = "***" }
            return components.string ?? "postgres://…"
        }
    }
}

public enum DatabaseURLError: Error, CustomStringConvertible {
    case invalid(String)
    public var description: String {
        switch self {
        case .invalid(let why): "invalid database URL: \(why)"
        }
    }
}
