import Foundation

/// The provider's own tokens for the person, from the web flow's code exchange or a refresh, kept for
/// the app when the operator opted in (``SocialProvider/keepTokens``). At rest they are sealed under
/// the server secret inside the identity's config; the refresh token never leaves Gatehouse.
public struct ProviderGrant: Codable, Sendable, Hashable {
    public var accessToken: String
    public var refreshToken: String?
    public var expiresAt: Date?
    public var scope: String?
    public var tokenType: String?

    /// How long before its expiry an access token is refreshed rather than handed out: an app must be
    /// able to use what it gets.
    public static let margin: TimeInterval = 60

    private enum CodingKeys: String, CodingKey {
        case accessToken = "a", refreshToken = "r", expiresAt = "e", scope = "s", tokenType = "t"
    }

    init(accessToken: String, refreshToken: String?, expiresAt: Date?, scope: String?, tokenType: String?) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.scope = scope
        self.tokenType = tokenType
    }

    /// Whether the access token can be handed out at `now` (one without a stated expiry is taken as
    /// valid: the provider will say when it is not).
    func isFresh(at now: Date) -> Bool { expiresAt.map { $0.timeIntervalSince(now) > Self.margin } ?? true }

    func sealed(with secret: ServerSecret) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return try secret.seal(try encoder.encode(self))
    }

    static func opened(_ sealed: String, with secret: ServerSecret) throws -> ProviderGrant {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(ProviderGrant.self, from: try secret.open(sealed))
    }
}

extension ProviderGrant: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never the tokens: a grant may end up in a log line or an error.
    public var description: String {
        "ProviderGrant(expires: \(expiresAt.map { "\($0)" } ?? "unstated"), refresh token: \(refreshToken == nil ? "none" : "set"))"
    }
    public var debugDescription: String { description }
}
