import Foundation
import GatehouseAPI

extension SecondFactorKind {
    /// One of the user's passkeys: ask for the challenge with ``AuthClient/passkeyOptions(for:)`` and
    /// answer with ``AuthClient/signIn(secondFactor:challenge:persist:)``. Offered first to a user who has
    /// a passkey, wherever a second factor is needed.
    public static let passkey = SecondFactorKind("passkey")
}

/// Passkeys as data: each ceremony is options from the server, handed to any authenticator (the
/// platform's on Apple devices through ``PlatformPasskeys/registerPasskey(name:anchor:)`` and
/// ``PlatformPasskeys/signInWithPasskey(anchor:persist:)``, a browser's, a security key's, or a software
/// authenticator in tests), and the authenticator's response back to the server.
extension AuthClient {
    /// Starts registering a passkey for the signed-in user: the single-use challenge (``PasskeyCreationOptions/flowId``,
    /// five minutes) and WebAuthn's creation options for the authenticator. Needs a recent sign-in, and
    /// one that passed the second factor when the user has one (`reauthentication_required` otherwise).
    public func passkeyRegistrationOptions() async throws -> PasskeyCreationOptions {
        try await authorized(try http.json(http.request("POST", "/v1/passkeys/registration/options"), body: [String: String]()))
    }

    /// Finishes a registration with the authenticator's response to ``passkeyRegistrationOptions()``.
    /// The server checks it strictly (origin, challenge, RP ID, user verification, attestation); a
    /// refusal is `invalid_passkey`, with the check that failed in the message.
    @discardableResult
    public func registerPasskey(
        _ credential: RegistrationCredential, options: PasskeyCreationOptions, name: String? = nil
    ) async throws -> Passkey {
        let body = PasskeyRegistrationRequest(flowId: options.flowId, credential: credential, name: name)
        return try await authorized(try http.json(http.request("POST", "/v1/passkeys/registration"), body: body))
    }

    /// The signed-in user's passkeys, oldest first (names, dates, sync state; never a key).
    public func passkeys() async throws -> [Passkey] {
        try await authorized(http.request("GET", "/v1/me/passkeys"))
    }

    /// Gives one of the user's passkeys a new name (1 to 64 characters).
    @discardableResult
    public func renamePasskey(id: String, name: String) async throws -> Passkey {
        try await authorized(
            try http.json(http.request("PATCH", "/v1/me/passkeys/" + Self.pathSegment(id)), body: PasskeyUpdate(name: name)))
    }

    /// Removes one of the user's passkeys and ends the sessions it started; refused while it is the
    /// user's last way to sign in (`last_sign_in_method`).
    public func removePasskey(id: String) async throws {
        try await authorized(http.request("DELETE", "/v1/me/passkeys/" + Self.pathSegment(id)))
    }

    /// Starts a usernameless passkey sign-in: a single-use challenge and the request options (no
    /// credentials named: the authenticator offers the passkeys it holds for the server's RP ID).
    public func passkeySignInOptions() async throws -> PasskeyRequestOptions {
        try await http.send(
            try http.json(
                http.request("POST", "/v1/passkeys/authentication/options"), body: PasskeyOptionsRequest(clientId: configuration.clientID)))
    }

    /// Signs in with the authenticator's answer to ``passkeySignInOptions()``, and answers the same
    /// ``SignInResult`` as every sign-in. A user-verified passkey is two factors: its session's `amr`
    /// holds `mfa`, and no second factor is asked.
    @discardableResult
    public func signIn(
        passkey credential: AuthenticationCredential, options: PasskeyRequestOptions, scopes: Set<Scope> = [], persist: Bool = true
    ) async throws -> SignInResult {
        let body = PasskeyAuthenticationRequest(
            clientId: configuration.clientID, flowId: options.flowId, credential: credential, scope: scopes.wireValue)
        let tokens: TokenResponse = try await http.send(try http.json(http.request("POST", "/v1/passkeys/authentication"), body: body))
        return try await adopt(tokens, persist: persist)
    }

    /// The challenge a passkey answers to complete a sign-in waiting for its second factor (one that
    /// lists ``SecondFactorKind/passkey``), with the user's passkeys named.
    public func passkeyOptions(for challenge: SecondFactorChallenge) async throws -> PasskeyRequestOptions {
        try await http.send(
            try http.json(http.request("POST", "/v1/mfa/passkey/options"), body: SecondFactorPasskeyRequest(flowId: challenge.flowID)))
    }

    /// Completes a waiting sign-in with a passkey's answer to ``passkeyOptions(for:)``.
    @discardableResult
    public func signIn(
        secondFactor credential: AuthenticationCredential, challenge: SecondFactorChallenge, persist: Bool = true
    ) async throws -> SignInResult {
        let body = SecondFactorRequest(
            clientId: configuration.clientID, flowId: challenge.flowID, factor: SecondFactorKind.passkey.rawValue, code: "",
            credential: credential)
        let tokens: TokenResponse = try await http.send(try http.json(http.request("POST", "/v1/mfa/verify"), body: body))
        return try await adopt(tokens, persist: persist)
    }
}
