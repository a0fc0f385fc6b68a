import Foundation

/// Where the data lives, parsed from `GATEHOUSE_DATABASE_URL`.
public enum DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    public init(_ raw: String) throws {
        if raw.hasPrefix("postgres://") || raw.hasPrefix("postgresql://") {
            self = .postgres(url: raw)
        } else if raw.hasPrefix("sqlite://") {
            let path = String(raw.dropFirst("sqlite://".count))
            guard !path.isEmpty else { throw DatabaseURLError.invalid("sqlite:// needs a file path") }
            self = .sqlite(path: path)
        } else {
            throw DatabaseURLError.invalid("use sqlite:///path/file.sqlite or postgres://user:pass@host:port/db")
        }
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
        switch self { case .invalid(let why): "invalid database URL: \(why)" }
    }
}
