import Foundation
import GatehouseCore

/// The operator's social providers (`GATEHOUSE_SOCIAL_FILE`, JSON), checked whole at start: a server
/// that would silently accept no provider, or a provider's keys from plain http, refuses to start.
///
/// ```json
/// {"providers": [
///   {"id": "apple", "type": "apple", "client_ids": ["com.example.app"]},
///   {"id": "google", "type": "google", "client_ids": ["1234-ios.apps.googleusercontent.com", "1234-web.apps.googleusercontent.com"]},
///   {"id": "acme", "type": "oidc", "issuer": "https://sso.acme.example", "client_ids": ["gatehouse"]}
/// ]}
/// ```
enum SocialProvidersFile {
    struct File: Decodable {
        var providers: [Entry]
    }

    struct Entry: Decodable {
        var id: String
        var type: String
        var clientIds: [String]
        var issuer: String?
        var jwksUri: String?

        enum CodingKeys: String, CodingKey {
            case id, type, issuer
            case clientIds = "client_ids", jwksUri = "jwks_uri"
        }
    }

    static func load(path: String) throws -> [SocialProvider] {
        guard let data = FileManager.default.contents(atPath: path) else { throw SocialProvidersError("cannot read \(path)") }
        try refuseUnknownKeys(data)
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw SocialProvidersError("\(path) is not a providers file: \(error)")
        }
        var seen: Set<String> = []
        return try file.providers.map { entry in
            guard SocialProvider.isValidID(entry.id) else {
                throw SocialProvidersError("provider id \(entry.id): use 1–40 lowercase letters, digits and '-'")
            }
            guard seen.insert(entry.id).inserted else { throw SocialProvidersError("provider \(entry.id) is listed twice") }
            guard let kind = SocialProvider.Kind(rawValue: entry.type) else {
                throw SocialProvidersError("provider \(entry.id): type must be one of \(SocialProvider.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard !entry.clientIds.isEmpty, entry.clientIds.allSatisfy({ !$0.isEmpty && $0.count <= 256 }) else {
                throw SocialProvidersError("provider \(entry.id): client_ids lists the app's ids at the provider (at least one)")
            }
            for url in [entry.issuer, entry.jwksUri].compactMap({ $0 }) {
                guard let parsed = URL(string: url), let host = parsed.host, parsed.scheme == "https" || (parsed.scheme == "http" && Loopback.contains(host))
                else { throw SocialProvidersError("provider \(entry.id): \(url) must be https (http only to this machine)") }
            }
            if kind == .oidc, entry.issuer == nil {
                throw SocialProvidersError("provider \(entry.id): an oidc provider needs its issuer")
            }
            return SocialProvider.preset(kind, id: entry.id, clientIDs: entry.clientIds, issuer: entry.issuer, jwksURI: entry.jwksUri)
        }
    }

    /// A misspelt key would otherwise be ignored (a `client_id` for `client_ids` would accept nothing).
    private static func refuseUnknownKeys(_ data: Data) throws {
        guard let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return }
        if let unknown = top.keys.sorted().first(where: { $0 != "providers" }) {
            throw SocialProvidersError("unknown key \(unknown) in the file")
        }
        for provider in top["providers"] as? [[String: Any]] ?? [] {
            if let unknown = provider.keys.sorted().first(where: { !["id", "type", "client_ids", "issuer", "jwks_uri"].contains($0) }) {
                throw SocialProvidersError("unknown key \(unknown) in a provider")
            }
        }
    }
}

struct SocialProvidersError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = "social providers file: " + description }
}
