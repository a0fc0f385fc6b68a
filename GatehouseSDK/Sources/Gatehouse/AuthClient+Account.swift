import Crypto
import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a sign-up led to.
public enum SignUpResult: Sendable, Equatable {
    /// The client needs no verification: the user is signed in, with the same ``SignInResult`` every
    /// sign-in answers (`isNew` is `true`: the sign-up made the account).
    case signedIn(SignInResult)
    /// A verification mail went out; verify by code (``AuthClient/signIn(email:verificationCode:persist:)``) or link
    /// (``AuthClient/handle(url:persist:)``).
    case verificationRequired(User)

    /// The account, signed in or waiting for its verification.
    public var user: User {
        switch self {
        case .signedIn(let result): result.user
        case .verificationRequired(let user): user
        }
    }
}

extension AuthClient {
    /// Creates an account. With a ``Configuration/redirectURL`` the verification link returns into the
    /// app with a code the SDK exchanges using the PKCE verifier it keeps from here.
    public func signUp(
        email: String, password: String, profile: Profile? = nil, acceptTerms: Bool? = nil, persist: Bool = true
    ) async throws -> SignUpResult {
        let fields: [String: String?] = ["email": email, "password": password]
        try await check(fields.merging(Self.fields(of: profile)) { given, _ in given }, for: .signUp)
        return try await sendSignUp(email: email, password: password, profile: profile, acceptTerms: acceptTerms, persist: persist)
    }

    /// The sign-up request, after the app's validator.
    func sendSignUp(
        email: String, password: String, profile: Profile?, acceptTerms: Bool?, persist: Bool, username: String? = nil
    ) async throws -> SignUpResult {
        var body = SignupRequest(
            clientId: configuration.clientID, email: email, password: password, profile: profile, acceptTerms: acceptTerms,
            username: username)
        if let redirect = configuration.redirectURL {
            let pkce = PKCE.make()
            pkceVerifier = pkce.verifier
            try await updatePendingVerifiers { $0.signUp = pkce.verifier }
            body.redirectTo = redirect.absoluteString
            body.codeChallenge = pkce.challenge
            body.codeChallengeMethod = "S256"
        }
        let (data, response) = try await http.perform(
            try await challenged(try http.json(http.request("POST", "/v1/signup"), body: body), .signUp))
        let decoder = WireCoding.decoder()
        if let tokens = try? decoder.decode(TokenResponse.self, from: data) {
            var result = try await adopt(tokens, persist: persist)
            // A server from before `is_new` on sign-up answers without it; a sign-up made the account either way.
            result.isNew = true
            return .signedIn(result)
        }
        guard let pending = try? decoder.decode(SignupPendingResponse.self, from: data) else {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: response.statusCode, message: "Unreadable answer.")
        }
        return .verificationRequired(pending.user)
    }

    /// Signs in with email and password. Signing in while another session is open ends that one on the
    /// server as well (every sign-in call does).
    ///
    /// - Parameters:
    ///   - email: the account's address.
    ///   - password: its password.
    ///   - scopes: what to ask for; empty asks for the client's defaults. The server grants the ones
    ///     the client allows and drops the rest without an error, so read ``Session/scopes`` rather
    ///     than assume. With ``Scope/openid`` the answer carries an ID token (``Session/idToken``).
    ///   - nonce: goes into the ID token's `nonce` claim, to bind it to this sign-in.
    ///   - persist: `false` keeps the session in memory only, refreshes included.
    /// - Returns: the same ``SignInResult`` as every other sign-in, so one code path handles them all.
    @discardableResult
    public func signIn(
        email: String, password: String, scopes: Set<Scope> = [], nonce: String? = nil, persist: Bool = true
    ) async throws -> SignInResult {
        try await check(["email": email, "password": password], for: .logIn)
        return try await sendLogIn(email: email, password: password, scopes: scopes, nonce: nonce, persist: persist)
    }

    /// The login request, after the app's validator.
    func sendLogIn(
        email: String, password: String, scopes: Set<Scope>, nonce: String?, persist: Bool, username: String? = nil
    ) async throws -> SignInResult {
        var body = LoginRequest(clientId: configuration.clientID, email: email, password: password, scope: scopes.wireValue, nonce: nonce)
        body.username = username
        let request = try http.json(http.request("POST", "/v1/login"), body: body)
        return try await adopt(try await http.send(try await challenged(request, .signIn)), persist: persist)
    }

    /// Signs out: ends sessions on the server (this one, the others, or all) and, for `local` and
    /// `global`, here. Local state is cleared even when the server cannot be reached, because a user
    /// who asked to sign out must not stay signed in on this device; the answer says whether the
    /// server revoked the session or only this device forgot it.
    /// Throws `store_unavailable` (retryable, nothing changed) while the session store cannot be read
    /// yet, and the server's error for `.others`.
    @discardableResult
    public func signOut(scope: LogoutScope = .local) async throws -> LogoutOutcome {
        await restore()
        guard restored else { throw storeUnavailable }
        guard let current = storedSession else { return .notSignedIn }
        let request = try http.json(http.request("POST", "/v1/logout", bearer: current.accessToken), body: LogoutRequest(scope: scope))
        var outcome = LogoutOutcome.revoked
        do {
            try await http.send(request)
        } catch let error as GatehouseError where error.status == 401 {
            // Already over on the server.
        } catch let error as GatehouseError {
            if scope == .others { throw error }
            outcome = .localOnly(error)
        }
        if scope != .others { await end(.userRequested) }
        return outcome
    }

    /// The user as the server has it now.
    @discardableResult
    public func refreshUser() async throws -> User {
        let user: User = try await authorized(http.request("GET", "/v1/me"))
        try await updateStored(user)
        return user
    }

    /// Updates profile fields; fields left `nil` keep their value. Field errors come back in
    /// ``GatehouseError/validation``.
    @discardableResult
    public func updateProfile(_ profile: Profile) async throws -> User {
        try await check(Self.fields(of: profile), for: .updateProfile)
        return try await sendProfileUpdate(profile)
    }

    /// The profile update, after the app's validator.
    func sendProfileUpdate(_ profile: Profile) async throws -> User {
        let request = try http.json(http.request("PATCH", "/v1/me"), body: ProfileUpdateRequest(profile: profile))
        let user: User = try await authorized(request)
        try await updateStored(user)
        return user
    }

    /// Sets a new password; `current` may be left out within minutes of a recovery sign-in.
    public func changePassword(to password: String, current: String? = nil) async throws {
        try await authorized(
            try http.json(
                http.request("PUT", "/v1/me/password"), body: PasswordChangeRequest(password: password, currentPassword: current)))
    }

    /// The user's active sessions.
    public func sessions() async throws -> [SessionInfo] {
        let list: SessionList = try await authorized(http.request("GET", "/v1/me/sessions"))
        return list.sessions
    }

    /// Ends one of the user's sessions (another device, say).
    public func revokeSession(_ id: UUID) async throws {
        try await authorized(http.request("DELETE", "/v1/me/sessions/\(id.uuidString.lowercased())"))
    }

    func updateStored(_ user: User) async throws {
        guard var current = storedSession else { return }
        current.user = user
        commit(current, state: .signedIn(user))
        if persisted {
            // Under the store's lock, as refreshes save: the latest session goes to the store, and never
            // an older one over a newer.
            try await configuration.store.withExclusiveAccess { [self] in try await self.saveLatest() }
        }
        await emit(.userUpdated(user))
    }

    private func saveLatest() async throws {
        if persisted, let latest = storedSession { try await configuration.store.save(latest) }
    }
}

/// PKCE (RFC 7636) S256 pairs.
enum PKCE {
    static func make() -> (verifier: String, challenge: String) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let verifier = base64URL(Data(bytes))
        return (verifier, challenge(of: verifier))
    }

    static func challenge(of verifier: String) -> String { base64URL(Data(SHA256.hash(data: Data(verifier.utf8)))) }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
