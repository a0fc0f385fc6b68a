import Foundation
import GatehouseAPI

/// A signed-in session as the SDK keeps it between launches.
public struct StoredSession: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String
    public var accessTokenExpiresAt: Date
    public var user: User
    /// The granted scopes, space-separated as on the wire; absent in sessions stored by older SDKs.
    public var scope: String?
    public var idToken: String?
    /// `DPoP` when the tokens are bound to ``dpopKey`` (RFC 9449), `Bearer` or absent otherwise.
    public var tokenType: String?
    /// The key this session's tokens are bound to: without it they are useless, on this device or any other.
    public var dpopKey: StoredDPoPKey?

    public init(
        accessToken: String, refreshToken: String, accessTokenExpiresAt: Date, user: User, scope: String? = nil,
        idToken: String? = nil, tokenType: String? = nil, dpopKey: StoredDPoPKey? = nil
    ) {
        self.tokenType = tokenType
        self.dpopKey = dpopKey
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.user = user
        self.scope = scope
        self.idToken = idToken
    }
}

/// Where the session lives between launches: the Keychain on Apple platforms, a 0600 file on
/// Linux (the defaults, see ``AuthClient/Configuration/defaultStore(baseURL:clientID:)``), memory in
/// tests and previews.
public protocol SessionStore: Sendable {
    func load() async throws -> StoredSession?
    func save(_ session: StoredSession) async throws
    func clear() async throws
    /// Keeps the PKCE verifier of a sign-up until its verification link comes back, which may be
    /// after the app was killed and relaunched. `nil` removes it.
    func savePendingVerifier(_ verifier: String?) async throws
    func loadPendingVerifier() async throws -> String?
    /// Runs `body` while no other process using the same store runs it: an app and its extension
    /// must never refresh the same token at once. Stores for one process may just run it.
    func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T
}

extension SessionStore {
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await body()
    }
}

/// A store that forgets everything when the process ends.
public actor InMemorySessionStore: SessionStore {
    private var session: StoredSession?
    private var verifier: String?

    public init(_ session: StoredSession? = nil) { self.session = session }

    public func load() async throws -> StoredSession? { session }
    public func save(_ session: StoredSession) async throws { self.session = session }
    public func clear() async throws { session = nil }
    public func savePendingVerifier(_ verifier: String?) async throws { self.verifier = verifier }
    public func loadPendingVerifier() async throws -> String? { verifier }
}
