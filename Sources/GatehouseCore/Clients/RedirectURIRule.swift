import Foundation

// What a client's registration must satisfy, shared by the settings parser and `ClientAdmin` (which
// both report problems as `ClientAdminError`), so neither depends on the other.
enum RedirectURIRule {
    /// Exact-match URIs: an https URL, a loopback http URL, or a private-use app scheme
    /// (`com.example.app:/callback`). No wildcards, no fragments.
    static func validateRedirectURI(_ uri: String) throws {
        guard uri.count <= 2048, let url = URL(string: uri), let scheme = url.scheme?.lowercased(), url.fragment == nil
        else { throw ClientAdminError.invalid("redirect URI \(uri) is not a valid absolute URI without fragment") }
        switch scheme {
        case "https": return
        case "http" where ["127.0.0.1", "localhost", "[::1]", "::1"].contains(url.host ?? ""): return
        case "http", "javascript", "data", "file", "vbscript":
            throw ClientAdminError.invalid("redirect URI scheme \(scheme) is not allowed (use https, loopback http or an app scheme)")
        default:
            guard scheme.contains(".") else {
                throw ClientAdminError.invalid("app redirect schemes must be reverse-DNS, like com.example.app")
            }
        }
    }

    /// An https URL, or http to a loopback address: where Gatehouse itself posts to a client.
    static func isSecureWebURL(_ value: String) -> Bool {
        guard value.count <= 2048, let url = URL(string: value), let scheme = url.scheme?.lowercased(), url.fragment == nil,
            let host = url.host, !host.isEmpty
        else { return false }
        return scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "[::1]", "::1"].contains(host))
    }
}

public enum ClientAdminError: Error, CustomStringConvertible, Equatable {
    case invalid(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .invalid(let why): why
        case .notFound(let id): "no client with id \(id)"
        }
    }
}
