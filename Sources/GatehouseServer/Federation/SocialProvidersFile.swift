import Foundation
import GatehouseCore

/// The operator's social providers (`GATEHOUSE_SOCIAL_FILE`, JSON), checked whole at start: a server
/// that would silently accept no provider, a provider's endpoints over plain http, or a secret that
/// is missing where a check needs it, refuses to start.
///
/// ```json
/// {"providers": [
///   {"id": "apple", "type": "apple", "client_ids": ["com.example.app", "com.example.web"],
///    "apple_team_id": "TEAM123456", "apple_key_id": "KEY1234567", "apple_private_key_file": "/etc/gatehouse/apple.p8"},
///   {"id": "google", "type": "google", "client_ids": ["1234-ios.apps.googleusercontent.com", "1234-web.apps.googleusercontent.com"],
///    "web_client_id": "1234-web.apps.googleusercontent.com", "client_secret_env": "GOOGLE_SECRET"},
///   {"id": "facebook", "type": "facebook", "client_ids": ["123456789"], "client_secret_env": "FACEBOOK_SECRET"},
///   {"id": "github", "type": "github", "client_ids": ["Iv1.abc"], "client_secret_env": "GITHUB_SECRET",
///    "keep_tokens": true, "keep_profile": true},
///   {"id": "acme", "type": "oidc", "issuer": "https://sso.acme.example", "client_ids": ["gatehouse"]}
/// ]}
/// ```
enum SocialProvidersFile {
    static let keys: Set<String> = [
        "id", "type", "client_ids", "web_client_id", "client_secret", "client_secret_env", "issuer", "jwks_uri",
        "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "introspection_endpoint", "api_base", "scopes", "pkce",
        "claims", "apple_team_id", "apple_key_id", "apple_private_key_file", "keep_tokens", "keep_profile",
    ]
    static let claimKeys: Set<String> = ["subject", "email", "email_verified", "name", "given_name", "family_name"]

    struct File: Decodable {
        var providers: [Entry]
    }

    struct Entry: Decodable {
        var id: String
        var type: String
        var clientIds: [String]
        var webClientId: String?
        var clientSecret: String?
        var clientSecretEnv: String?
        var issuer: String?
        var jwksUri: String?
        var authorizationEndpoint: String?
        var tokenEndpoint: String?
        var userinfoEndpoint: String?
        var introspectionEndpoint: String?
        var apiBase: String?
        var scopes: [String]?
        var pkce: Bool?
        var claims: [String: String]?
        var appleTeamId: String?
        var appleKeyId: String?
        var applePrivateKeyFile: String?
        var keepTokens: Bool?
        var keepProfile: Bool?

        enum CodingKeys: String, CodingKey {
            case id, type, issuer, scopes, pkce, claims
            case clientIds = "client_ids", webClientId = "web_client_id", clientSecret = "client_secret", clientSecretEnv =
                "client_secret_env"
            case jwksUri = "jwks_uri", authorizationEndpoint = "authorization_endpoint", tokenEndpoint = "token_endpoint"
            case userinfoEndpoint = "userinfo_endpoint", introspectionEndpoint = "introspection_endpoint", apiBase = "api_base"
            case appleTeamId = "apple_team_id", appleKeyId = "apple_key_id", applePrivateKeyFile = "apple_private_key_file"
            case keepTokens = "keep_tokens", keepProfile = "keep_profile"
        }
    }

    static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> [SocialProvider] {
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
                throw SocialProvidersError(
                    "provider \(entry.id): type must be one of \(SocialProvider.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard !entry.clientIds.isEmpty, entry.clientIds.allSatisfy({ !$0.isEmpty && $0.count <= 256 }) else {
                throw SocialProvidersError("provider \(entry.id): client_ids lists the app's ids at the provider (at least one)")
            }
            let urls = [
                entry.issuer, entry.jwksUri, entry.authorizationEndpoint, entry.tokenEndpoint, entry.userinfoEndpoint,
                entry.introspectionEndpoint, entry.apiBase,
            ]
            for url in urls.compactMap({ $0 }) {
                guard let parsed = URL(string: url), let host = parsed.host,
                    parsed.scheme == "https" || (parsed.scheme == "http" && Loopback.contains(host))
                else { throw SocialProvidersError("provider \(entry.id): \(url) must be https (http only to this machine)") }
            }
            if kind == .oidc, entry.issuer == nil {
                throw SocialProvidersError("provider \(entry.id): an oidc provider needs its issuer")
            }
            if kind == .oauth2, entry.authorizationEndpoint == nil || entry.tokenEndpoint == nil || entry.userinfoEndpoint == nil {
                throw SocialProvidersError(
                    "provider \(entry.id): an oauth2 provider needs authorization_endpoint, token_endpoint and userinfo_endpoint")
            }
            var settings = SocialProvider.Settings(clientIDs: entry.clientIds)
            settings.webClientID = entry.webClientId
            settings.clientSecret = try secret(entry, environment: environment)
            settings.issuer = entry.issuer
            settings.jwksURI = entry.jwksUri
            settings.endpoints = SocialProvider.Endpoints(
                authorization: entry.authorizationEndpoint, token: entry.tokenEndpoint, userinfo: entry.userinfoEndpoint,
                introspection: entry.introspectionEndpoint, api: entry.apiBase)
            settings.scopes = entry.scopes
            settings.pkce = entry.pkce
            settings.keepTokens = entry.keepTokens ?? false
            settings.keepProfile = entry.keepProfile ?? false
            if let claims = entry.claims {
                if let unknown = claims.keys.sorted().first(where: { !claimKeys.contains($0) }) {
                    throw SocialProvidersError(
                        "provider \(entry.id): unknown claim \(unknown) (use \(claimKeys.sorted().joined(separator: ", ")))")
                }
                var map = SocialProvider.ClaimMap()
                map.subject = claims["subject"] ?? map.subject
                map.email = claims["email"] ?? map.email
                map.emailVerified = claims["email_verified"] ?? map.emailVerified
                map.name = claims["name"] ?? map.name
                map.givenName = claims["given_name"] ?? map.givenName
                map.familyName = claims["family_name"] ?? map.familyName
                settings.claimMap = map
            }
            settings.appleKey = try appleKey(entry, kind: kind)
            if let web = entry.webClientId, !entry.clientIds.contains(web) {
                throw SocialProvidersError("provider \(entry.id): web_client_id must be one of client_ids (the web flow's tokens name it)")
            }
            // Without an ID token's nonce, PKCE is what ties a provider's code to the browser that asked
            // for it (RFC 9700 §2.1.1): a code stolen elsewhere could otherwise be replayed here.
            if entry.pkce == false, [.facebook, .github, .x, .oauth2].contains(kind) {
                throw SocialProvidersError("provider \(entry.id): pkce cannot be turned off for a provider without ID tokens")
            }
            if (kind == .facebook || kind == .github || kind == .x), settings.clientSecret == nil {
                throw SocialProvidersError(
                    "provider \(entry.id): \(kind.rawValue) needs client_secret or client_secret_env (its token checks and the web flow use it)"
                )
            }
            return SocialProvider.preset(kind, id: entry.id, settings: settings)
        }
    }

    /// A secret from the environment keeps it out of a file that may be shared or committed.
    private static func secret(_ entry: Entry, environment: [String: String]) throws -> String? {
        if let name = entry.clientSecretEnv {
            guard let value = environment[name], !value.isEmpty else {
                throw SocialProvidersError("provider \(entry.id): the environment variable \(name) is not set")
            }
            return value
        }
        return entry.clientSecret
    }

    private static func appleKey(_ entry: Entry, kind: SocialProvider.Kind) throws -> SocialProvider.AppleSigningKey? {
        let parts = [entry.appleTeamId, entry.appleKeyId, entry.applePrivateKeyFile]
        if parts.allSatisfy({ $0 == nil }) { return nil }
        guard kind == .apple, let team = entry.appleTeamId, let key = entry.appleKeyId, let file = entry.applePrivateKeyFile else {
            throw SocialProvidersError(
                "provider \(entry.id): apple_team_id, apple_key_id and apple_private_key_file go together, on an apple provider")
        }
        guard let pem = FileManager.default.contents(atPath: file).map({ String(decoding: $0, as: UTF8.self) }), pem.contains("PRIVATE KEY")
        else { throw SocialProvidersError("provider \(entry.id): cannot read a private key from \(file)") }
        return SocialProvider.AppleSigningKey(teamID: team, keyID: key, privateKeyPEM: pem)
    }

    /// A misspelt key would otherwise be ignored (a `client_id` for `client_ids` would accept nothing).
    private static func refuseUnknownKeys(_ data: Data) throws {
        guard let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return }
        if let unknown = top.keys.sorted().first(where: { $0 != "providers" }) {
            throw SocialProvidersError("unknown key \(unknown) in the file")
        }
        for provider in top["providers"] as? [[String: Any]] ?? [] {
            if let unknown = provider.keys.sorted().first(where: { !keys.contains($0) }) {
                throw SocialProvidersError("unknown key \(unknown) in a provider")
            }
        }
    }
}

struct SocialProvidersError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = "social providers file: " + description }
}
