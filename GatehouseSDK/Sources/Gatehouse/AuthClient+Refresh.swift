import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AuthClient {
    /// A session whose access token is good for at least the refresh margin, refreshing when needed.
    func validSession() async throws -> StoredSession {
        await restore()
        guard restored else { throw storeUnavailable }
        guard let current = storedSession else {
            throw GatehouseError(code: GatehouseError.notSignedIn, status: nil, message: "Nobody is signed in.")
        }
        if isFresh(current) { return current }
        return try await refresh(replacing: current.accessToken)
    }

    /// Whether the access token is good for at least the refresh margin by the configured clock.
    func isFresh(_ session: StoredSession) -> Bool {
        session.accessTokenExpiresAt.timeIntervalSince(configuration.clock.now) > configuration.refreshMargin
    }

    /// Refreshes once for every caller waiting at the same time. `replacing` is the access token the
    /// caller found wanting: if the session has moved on since, the newer one is used as it is.
    func refresh(replacing accessToken: String, force: Bool = false) async throws -> StoredSession {
        if !force, let session = storedSession, session.accessToken != accessToken, isFresh(session) {
            return session
        }
        if let running = refreshTask { return try await running.value }
        let task = Task { try await self.performRefresh(force: force) }
        refreshTask = task
        defer { refreshTask = nil }
        return try await task.value
    }

    /// The refresh itself, under the store's cross-process lock. A refresh is never retried blindly:
    /// under rotation a repeated POST looks like token reuse.
    private func performRefresh(force: Bool) async throws -> StoredSession {
        let store = configuration.store
        do {
            return try await store.withExclusiveAccess { [self] in
                try await self.refreshHoldingLock(force: force)
            }
        } catch let timeout as FileLockTimeout {
            throw GatehouseError(code: GatehouseError.storeUnavailable, status: nil, message: timeout.description)
        }
    }

    private func refreshHoldingLock(force: Bool) async throws -> StoredSession {
        guard let current = storedSession else {
            throw GatehouseError(code: GatehouseError.notSignedIn, status: nil, message: "Nobody is signed in.")
        }
        // Another process sharing the store may have rotated the token while we waited for the lock:
        // use its session if still fresh, and in any case never present a token it already rotated.
        var base = current
        // Only a persisted session of the same user may be taken from the store.
        if persisted, let stored = try? await configuration.store.load(), stored.user.id == current.user.id,
            stored.refreshToken != current.refreshToken
        {
            if !force, isFresh(stored), stored.accessToken != current.accessToken {
                commit(stored)
                await emit(.tokenRefreshed)
                return stored
            }
            base = stored
            // Its tokens may be bound to a key that process made: refresh with that one.
            http.dpop.adopt(stored.dpopKey, bound: stored.tokenType == "DPoP")
        }
        let request = http.form(
            http.request("POST", "/oauth/token"),
            [("grant_type", "refresh_token"), ("refresh_token", base.refreshToken), ("client_id", configuration.clientID)])
        // While the request is out the actor serves other calls: a logout, a new sign-in or a profile
        // update may change the session. Only the session this refresh started from is replaced or ended.
        func stillCurrent() -> Bool { storedSession?.refreshToken == current.refreshToken }
        do {
            let tokens: TokenResponse = try await http.send(request)
            guard let refreshToken = tokens.refreshToken else {
                throw GatehouseError(code: GatehouseError.invalidResponse, status: 200, message: "No refresh token in the answer.")
            }
            guard stillCurrent(), let latest = storedSession else {
                // Renewed a session nobody holds any more: end it on the server rather than leave it open.
                await revokeQuietly(refreshToken: refreshToken)
                if let newer = storedSession, isFresh(newer) { return newer }
                throw GatehouseError(code: GatehouseError.notSignedIn, status: nil, message: "The session ended during the refresh.")
            }
            // A refresh answer carries no ID token (OpenID Connect §12.2 allows one; this server sends
            // none): the sign-in's stays. Its scope is the session's, unchanged; the user is the latest.
            let renewed = StoredSession(
                accessToken: tokens.accessToken, refreshToken: refreshToken,
                accessTokenExpiresAt: configuration.clock.now.addingTimeInterval(TimeInterval(tokens.expiresIn)),
                user: latest.user, scope: tokens.scope ?? base.scope, idToken: tokens.idToken ?? base.idToken,
                tokenType: tokens.tokenType, dpopKey: tokens.isDPoP ? http.dpop.issuingKey : nil)
            // In memory first: once the server rotated, only the new refresh token is good.
            commit(renewed)
            if persisted { try await configuration.store.save(renewed) }
            await emit(.tokenRefreshed)
            return renewed
        } catch let error as GatehouseError where error.isSessionEnded || error.code == .invalidClient {
            // Terminal: the server will never accept this session again (a newer one is not touched).
            if stillCurrent() { await end(.sessionRevoked) }
            throw error
        }
        // Network errors and 5xx keep the session: the next call tries again.
    }

    /// Renews the access token now (normally the SDK does this by itself ahead of expiry) and returns
    /// the renewed session.
    @discardableResult
    public func refreshSession() async throws -> Session {
        _ = try await validSession()
        guard let current = storedSession else {
            throw GatehouseError(code: GatehouseError.notSignedIn, status: nil, message: "Nobody is signed in.")
        }
        return Session(try await refresh(replacing: current.accessToken, force: true))
    }

    /// Performs `request` with the user's access token, refreshing ahead of expiry; on a 401 it
    /// refreshes once and retries once (the Bridge SDK's behaviour).
    public func authorizedData(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var current = try await validSession()
        var attempt = request
        attempt.setValue("Bearer \(current.accessToken)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await send(attempt)
        guard response.statusCode == 401 else { return (data, response) }
        current = try await refresh(replacing: current.accessToken)
        attempt.setValue("Bearer \(current.accessToken)", forHTTPHeaderField: "Authorization")
        let (retryData, retryResponse) = try await send(attempt)
        if retryResponse.statusCode == 401 {
            let error = APIClient.error(retryData, retryResponse)
            if error.code == .sessionRevoked { await end(.sessionRevoked) }
        }
        return (retryData, retryResponse)
    }

    /// `request` ready to send to your own API with the user's access token, refreshed first when
    /// needed: `Authorization: Bearer …`, or, when the session is bound to this device's key (DPoP),
    /// `Authorization: DPoP …` with a fresh proof for this request's method and URL in the `DPoP` header.
    /// A bound token is useless without the proof, so use this rather than ``accessToken()`` when the
    /// server binds tokens; each request needs its own (a proof is single use). Prefer
    /// ``authorizedData(for:)``, which also retries once after a 401.
    public func authorize(_ request: URLRequest) async throws -> URLRequest {
        let current = try await validSession()
        var request = request
        request.setValue("Bearer \(current.accessToken)", forHTTPHeaderField: "Authorization")
        return try await http.dpop.sign(request)
    }

    /// With a DPoP proof naming the token when the session is bound to this device's key.
    private func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await http.exchange(request)
    }

    /// A call to Gatehouse's own API with the user's token, refreshing and retrying once on 401 like
    /// ``authorizedData(for:)``, and signing out when the server says the session ended.
    func authorized<Answer: Decodable>(_ request: URLRequest, as: Answer.Type = Answer.self) async throws -> Answer {
        let (data, response) = try await authorizedData(for: request)
        guard (200..<300).contains(response.statusCode) else { throw APIClient.error(data, response) }
        do {
            return try WireCoding.decoder().decode(Answer.self, from: data)
        } catch {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: response.statusCode, message: "Unreadable answer.")
        }
    }

    /// Like ``authorized(_:as:)`` for answers without a body (204).
    func authorized(_ request: URLRequest) async throws {
        let (data, response) = try await authorizedData(for: request)
        guard (200..<300).contains(response.statusCode) else { throw APIClient.error(data, response) }
    }
}
