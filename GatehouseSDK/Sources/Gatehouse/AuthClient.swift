import Crypto
import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The entry point of the Gatehouse SDK: every server flow as an `async` call, a session that
/// persists and refreshes itself, and the auth state as a stream or a delegate.
///
/// Every method is safe to call concurrently: the client is an actor, and token refresh is
/// single-flight (concurrent callers await the same refresh) and coordinated across processes that
/// share one ``SessionStore``.
public actor AuthClient {
    /// How to reach the server and where to keep the session.
    public struct Configuration: Sendable {
        public var baseURL: URL
        public var clientID: String
        /// Where verification links return to the app (registered for the client), if the app handles them.
        public var redirectURL: URL?
        public var store: any SessionStore
        public var transport: any HTTPTransport
        /// Refresh this long before the access token expires.
        public var refreshMargin: TimeInterval

        public init(
            baseURL: URL, clientID: String, redirectURL: URL? = nil, store: any SessionStore = InMemorySessionStore(),
            transport: any HTTPTransport = URLSessionTransport(), refreshMargin: TimeInterval = 60
        ) {
            self.baseURL = baseURL
            self.clientID = clientID
            self.redirectURL = redirectURL
            self.store = store
            self.transport = transport
            self.refreshMargin = refreshMargin
        }
    }

    public let configuration: Configuration
    /// The current state; ``AuthState/restoring`` until ``restore()`` has read the store.
    public private(set) var state: AuthState = .restoring
    var session: StoredSession?
    var refreshTask: Task<StoredSession, any Error>?
    var restored = false
    var pkceVerifier: String?
    /// Whether the current session is kept in the store (`persist: false` keeps it in memory only).
    var persisted = true
    private var continuations: [UUID: AsyncStream<AuthEvent>.Continuation] = [:]
    private weak var delegate: (any AuthClientDelegate)?
    let http: APIClient

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.http = APIClient(baseURL: configuration.baseURL, transport: configuration.transport)
    }

    /// Sets the delegate, held weakly.
    public func setDelegate(_ delegate: (any AuthClientDelegate)?) { self.delegate = delegate }

    /// The auth events; the first element is the current state.
    public func events() -> AsyncStream<AuthEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthEvent.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        continuation.yield(.current(state))
        continuations[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeContinuation(id) }
        }
        return stream
    }

    private func removeContinuation(_ id: UUID) { continuations[id] = nil }

    func emit(_ event: AuthEvent) async {
        switch event {
        case .signedIn(let user), .userUpdated(let user): state = .signedIn(user)
        case .signedOut: state = .signedOut
        case .current, .tokenRefreshed: break
        }
        for continuation in continuations.values { continuation.yield(event) }
        await delegate?.authClient(self, didReceive: event)
    }

    /// Reads the stored session: the state goes from ``AuthState/restoring`` to signed in or out.
    /// Other calls do this first on their own; call it at launch to learn the state early.
    public func restore() async {
        guard !restored else { return }
        let loaded: StoredSession?
        do {
            loaded = try await configuration.store.load()
        } catch {
            // Unreadable for now (a Keychain before first unlock): stay restoring and try again on the
            // next call rather than claim nobody is signed in.
            return
        }
        restored = true
        session = loaded
        if let loaded {
            await emit(.signedIn(loaded.user))
        } else {
            state = .signedOut
            for continuation in continuations.values { continuation.yield(.current(.signedOut)) }
            await delegate?.authClient(self, didReceive: .current(.signedOut))
        }
    }

    /// The signed-in user, if any.
    public var currentUser: User? {
        if case .signedIn(let user) = state { return user }
        return nil
    }

    // MARK: Sessions from token responses

    func adopt(_ tokens: TokenResponse, user knownUser: User? = nil, persist: Bool = true) async throws -> User {
        guard let refreshToken = tokens.refreshToken, let user = tokens.user ?? knownUser ?? session?.user else {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "The token response lacks a session.")
        }
        let stored = StoredSession(
            accessToken: tokens.accessToken, refreshToken: refreshToken,
            accessTokenExpiresAt: Date().addingTimeInterval(TimeInterval(tokens.expiresIn)), user: user)
        let previous = session
        session = stored
        restored = true
        persisted = persist
        if persist { try await configuration.store.save(stored) }
        await emit(.signedIn(user))
        // Signing in while signed in ends the old session on the server too, or it would live on,
        // unreachable, until it expired. By its refresh token: the access token may have expired.
        if let previous, previous.refreshToken != refreshToken { await revokeQuietly(refreshToken: previous.refreshToken) }
        return user
    }

    /// The signed-in user, after reading the store if that has not happened yet.
    func signedInUser() async -> User? {
        await restore()
        return session?.user
    }

    func currentAccessToken() async -> String? {
        await restore()
        return session?.accessToken
    }

    /// Revokes a refresh token (RFC 7009), and with it its session, best effort.
    func revokeQuietly(refreshToken: String) async {
        let request = http.form(
            http.request("POST", "/oauth/revoke"),
            [("token", refreshToken), ("token_type_hint", "refresh_token"), ("client_id", configuration.clientID)])
        try? await http.send(request)
    }

    /// Ends another session of this device on the server, best effort (the one a registration replaced).
    func revokeQuietly(accessToken: String) async {
        guard let request = try? http.json(http.request("POST", "/v1/logout", bearer: accessToken), body: LogoutRequest(scope: .local))
        else { return }
        try? await http.send(request)
    }

    /// Forgets the session locally and tells why.
    func end(_ reason: SignOutReason) async {
        session = nil
        try? await configuration.store.clear()
        await emit(.signedOut(reason))
    }
}
