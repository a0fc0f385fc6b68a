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
        /// Where the session is kept between launches. The default keeps it: the Keychain on Apple
        /// platforms, a `0600` file on Linux (``defaultStore(baseURL:clientID:)``). Memory only
        /// (``InMemorySessionStore``) is for tests and previews, and only when asked for.
        public var store: any SessionStore
        public var transport: any HTTPTransport
        /// Refresh this long before the access token expires.
        public var refreshMargin: TimeInterval
        /// Where the client reads the time; inject one in tests.
        public var clock: any AuthClock
        /// The app's own checks, run before a form's request is sent; `nil` sends as it is.
        public var validator: (any FieldValidator)?
        /// Whether tokens are bound to a key of this device (DPoP, RFC 9449) when the server supports
        /// it: on by default, so a session copied off the device is useless elsewhere.
        public var dpop: DPoPSetting
        /// Where the DPoP key lives: the Secure Enclave on iOS and macOS devices, a software key in the
        /// session store elsewhere.
        public var dpopKeys: any DPoPKeyProvider
        /// Where a bot challenge's token comes from when the app's client on the server asks for one
        /// before sign-up, password sign-in or sending a code (`bot_challenge`): the app shows the
        /// widget (a Turnstile, hCaptcha or reCAPTCHA view) and answers its token. `nil` sends those
        /// requests without one; a client that asks then answers an error whose ``GatehouseError/isBotChallengeRefused`` is true.
        public var botChallenge: BotChallengeProvider?

        public init(
            baseURL: URL, clientID: String, redirectURL: URL? = nil, store: (any SessionStore)? = nil,
            transport: any HTTPTransport = URLSessionTransport(), refreshMargin: TimeInterval = 60,
            clock: any AuthClock = SystemClock(), validator: (any FieldValidator)? = nil, dpop: DPoPSetting = .automatic,
            dpopKeys: (any DPoPKeyProvider)? = nil, botChallenge: BotChallengeProvider? = nil
        ) {
            self.botChallenge = botChallenge
            self.dpop = dpop
            self.dpopKeys = dpopKeys ?? Self.defaultDPoPKeys
            self.baseURL = baseURL
            self.clientID = clientID
            self.redirectURL = redirectURL
            self.store = store ?? Self.defaultStore(baseURL: baseURL, clientID: clientID)
            self.transport = transport
            self.refreshMargin = refreshMargin
            self.clock = clock
            self.validator = validator
        }
    }

    /// How to reach the server, where the session is kept, and the clock. Readable without `await`.
    public nonisolated let configuration: Configuration
    /// Mirrors the state, the session and the delegate for readers that must not `await`.
    nonisolated let snapshot = StateSnapshot()
    /// The session as the SDK keeps it, refresh token included. Changed only through
    /// ``commit(_:state:)``, so synchronous readers see it change together with the state.
    private(set) var storedSession: StoredSession?
    var refreshTask: Task<StoredSession, any Error>?
    var restored = false
    var pkceVerifier: String?
    /// The web sign-in's own verifier (``socialSignInURL(provider:)``), apart from the sign-up's.
    var socialVerifier: String?
    /// The `state` of the web sign-in under way (``socialSignInURL(provider:)``), checked on return.
    var socialState: String?
    /// What the last ``sendCode(to:createUser:)`` asked for, per destination, for ``resendCode(to:createUser:)``.
    var sentCodes: [CodeDestination: Bool] = [:]
    /// Whether the current session is kept in the store (`persist: false` keeps it in memory only).
    var persisted = true
    private var continuations: [UUID: AsyncStream<AuthEvent>.Continuation] = [:]
    let http: APIClient

    public init(configuration: Configuration) {
        self.configuration = configuration
        let http = APIClient(
            baseURL: configuration.baseURL, transport: configuration.transport,
            dpop: DPoPSigner(enabled: configuration.dpop == .automatic, provider: configuration.dpopKeys, clock: configuration.clock))
        self.http = http
        http.challenges.listen { [weak self] challenge in await self?.emit(.secondFactorRequired(challenge)) }
    }

    /// The current state, readable from any thread without `await`: ``AuthState/restoring`` until
    /// ``restore()`` (or the first call that needs the session) has read the store.
    public nonisolated var state: AuthState { snapshot.read { $0.state } }

    /// The signed-in user, if any; readable without `await`.
    public nonisolated var currentUser: User? {
        if case .signedIn(let user) = state { return user }
        return nil
    }

    /// The current session, readable without `await`: its access token may be close to expiry (or
    /// past it, after a long suspension). For a token to send, ask ``accessToken()``, which refreshes
    /// first when needed.
    public nonisolated var session: Session? { snapshot.read { $0.session.map(Session.init) } }

    /// Sets the delegate, held weakly. Events that happen after this returns reach it.
    public nonisolated func setDelegate(_ delegate: (any AuthClientDelegate)?) {
        snapshot.write { $0.delegate = delegate }
    }

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

    /// Changes the session and, when given, the state in one step, before anything suspends: a reader
    /// on another thread never sees a session without its user or a user without its session.
    func commit(_ session: StoredSession?, state: AuthState? = nil) {
        storedSession = session
        http.dpop.adopt(session?.dpopKey, bound: session?.tokenType == "DPoP")
        snapshot.write {
            $0.session = session
            if let state { $0.state = state }
        }
    }

    /// Tells the streams and the delegate; the state was committed before.
    func emit(_ event: AuthEvent) async {
        for continuation in continuations.values { continuation.yield(event) }
        await snapshot.read { $0.delegate }?.authClient(self, didReceive: event)
    }

    /// Reads the stored session: the state goes from ``AuthState/restoring`` to signed in or out.
    /// Other calls do this first on their own; call it at launch to learn the state early.
    public func restore() async {
        guard !restored else { return }
        let loaded: StoredSession?
        do {
            loaded = try await configuration.store.load()
        } catch is DecodingError {
            // Readable but not a session (damaged, or written by an incompatible version): it will never
            // become one, so start signed out rather than stay restoring for good.
            try? await configuration.store.clear()
            loaded = nil
        } catch {
            // Unreadable for now (a Keychain before first unlock): stay restoring and try again on the
            // next call rather than claim nobody is signed in.
            return
        }
        // A sign-in that finished while the store was read has the newer session.
        guard !restored else { return }
        restored = true
        commit(loaded, state: loaded.map { .signedIn($0.user) } ?? .signedOut)
        await emit(loaded.map { .signedIn($0.user) } ?? .current(.signedOut))
    }

    /// An access token that is good for at least ``Configuration/refreshMargin``, refreshed first when
    /// it is not: for your own HTTP clients, WebSockets, or anything ``authorizedData(for:)`` does not
    /// cover. Throws ``GatehouseError/isSessionEnded`` when nobody is signed in or the server ended the
    /// session, and the retryable `store_unavailable` while the session store cannot be read yet.
    public func accessToken() async throws -> String {
        try await validSession().accessToken
    }

    // MARK: Sessions from token responses

    /// Makes a sign-in's token response the session: every sign-in path ends here, so every one
    /// answers the same ``SignInResult`` with the server's `is_new`.
    func adopt(_ tokens: TokenResponse, user knownUser: User? = nil, persist: Bool = true) async throws -> SignInResult {
        // The session of before, if any, is known only once the store was read: it must be ended too.
        await restore()
        guard let refreshToken = tokens.refreshToken, let user = tokens.user ?? knownUser ?? storedSession?.user else {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "The token response lacks a session.")
        }
        let stored = StoredSession(
            accessToken: tokens.accessToken, refreshToken: refreshToken,
            accessTokenExpiresAt: configuration.clock.now.addingTimeInterval(TimeInterval(tokens.expiresIn)), user: user,
            scope: tokens.scope, idToken: tokens.idToken, tokenType: tokens.tokenType,
            dpopKey: tokens.isDPoP ? http.dpop.issuingKey : nil)
        let previous = storedSession
        do {
            // Kept first, used after: a session the store refused is neither used nor left open.
            if persist {
                try await configuration.store.save(stored)
            } else {
                // A stored session of before would come back at the next launch, revoked.
                try? await configuration.store.clear()
            }
        } catch {
            await revokeQuietly(refreshToken: refreshToken)
            throw error
        }
        restored = true
        persisted = persist
        commit(stored, state: .signedIn(user))
        await emit(.signedIn(user))
        // Signing in while signed in ends the old session on the server too, or it would live on,
        // unreachable, until it expired. By its refresh token: the access token may have expired.
        if let previous, previous.refreshToken != refreshToken { await revokeQuietly(refreshToken: previous.refreshToken) }
        return SignInResult(stored, tokens: tokens)
    }

    /// The signed-in user, after reading the store if that has not happened yet; a store that cannot
    /// be read yet is ``GatehouseError/storeUnavailable``, not "nobody".
    func signedInUser() async throws -> User? {
        await restore()
        guard restored else { throw storeUnavailable }
        return storedSession?.user
    }

    func currentAccessToken() async -> String? {
        await restore()
        return storedSession?.accessToken
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

    /// Thrown instead of "not signed in" while the store cannot be read: the user may well be signed in.
    var storeUnavailable: GatehouseError {
        GatehouseError(
            code: GatehouseError.storeUnavailable, status: nil,
            message: "The session store cannot be read yet (a Keychain before the device's first unlock); try again later.")
    }

    /// Forgets the session locally and tells why.
    func end(_ reason: SignOutReason) async {
        commit(nil, state: .signedOut)
        http.dpop.forget()
        try? await configuration.store.clear()
        await emit(.signedOut(reason))
    }
}
