import Foundation
import GatehouseAPI

extension DeviceProfiles {
    /// Signs `profile` in with a PIN: one attempt. A wrong PIN throws a ``GatehouseError`` whose
    /// ``GatehouseError/failureCounts`` say how many are left; the last one throws
    /// ``DeviceAuthenticationError/deregistered`` and the authenticator is gone here and on the server.
    /// Answers the ``SignInResult`` every other sign-in answers, so a device sign-in needs no path
    /// of its own in the app.
    @discardableResult
    public func signIn(profile: UserProfile, pin: String) async throws -> SignInResult {
        let authenticator = try find(.pin, in: profile)
        guard let stored = try await state().keys[authenticator.id]?.pin else { throw DeviceAuthenticationError.unknownProfile }
        let key = try await Self.offMainWork { SoftwareDeviceKey(try stored.unlock(pin: pin)) }
        return try await exchange(profile: profile, authenticator: authenticator) {
            try await key.sign($0, reason: "pin")
        }
    }

    /// Signs `profile` in with its biometric or custom authenticator (whichever `authenticator` is, or
    /// the first of those it has).
    @discardableResult
    public func signIn(
        profile: UserProfile, authenticator: RegisteredAuthenticator? = nil, reason: String = "Sign in"
    ) async throws -> SignInResult {
        guard let chosen = authenticator ?? profile.authenticators.first(where: { $0.type != .pin }) else {
            throw DeviceAuthenticationError.unknownProfile
        }
        switch chosen.type {
        case .biometric:
            guard let stored = try await state().keys[chosen.id]?.biometric else { throw DeviceAuthenticationError.unknownProfile }
            let key = try configuration.biometricKeys.loadKey(stored)
            return try await exchange(profile: profile, authenticator: chosen) { try await key.sign($0, reason: reason) }
        case .custom:
            return try await signInWithCustom(profile: profile, authenticator: chosen, delegate: nil)
        case .pin:
            throw DeviceAuthenticationError.unknownProfile
        }
    }

    /// The delegate form: asks the delegate for a PIN (again after each wrong one, with the counts),
    /// for the biometric prompt's reason, or before a custom authenticator runs (with the counts of
    /// the challenge it will answer); tells it how it ended. Returns the result, or nil when it
    /// failed: the delegate learnt why, so there is nothing to throw.
    @discardableResult
    public func signIn(
        profile: UserProfile, authenticator: RegisteredAuthenticator, delegate: any AuthenticationDelegate
    ) async -> SignInResult? {
        await delegate.didStartAuthentication(profile: profile, authenticator: authenticator)
        do {
            let result: SignInResult
            switch authenticator.type {
            case .pin:
                result = try await signInWithPIN(profile: profile, authenticator: authenticator, delegate: delegate)
            case .biometric:
                guard let reason = await delegate.didReceiveBiometricChallenge(profile: profile, authenticator: authenticator) else {
                    throw DeviceAuthenticationError.cancelled
                }
                result = try await signIn(profile: profile, authenticator: authenticator, reason: reason)
            case .custom:
                result = try await signInWithCustom(profile: profile, authenticator: authenticator, delegate: delegate)
            }
            await delegate.didAuthenticate(user: result.user, profile: profile)
            return result
        } catch {
            await delegate.didFailToAuthenticate(profile: profile, error: error)
            return nil
        }
    }

    /// A custom authenticator's sign-in, asking `delegate` first when there is one. The challenge is
    /// fetched before anyone is asked, so the delegate and the authenticator both see the server's
    /// counts, and the challenge they approved is the one answered.
    private func signInWithCustom(
        profile: UserProfile, authenticator: RegisteredAuthenticator, delegate: (any AuthenticationDelegate)?
    ) async throws -> SignInResult {
        let material = try await state().keys[authenticator.id]
        guard let stored = material?.custom, let type = authenticator.customType else {
            throw DeviceAuthenticationError.unknownProfile
        }
        guard let custom = configuration.customAuthenticators.first(where: { $0.type == type }) else {
            throw DeviceAuthenticationError.unknownCustomType(type)
        }
        let key = try customKey(StoredDPoPKey(kind: material?.customKind ?? .software, data: stored))
        let challenge = try await fetchChallenge(profile: profile, authenticator: authenticator)
        let asked = CustomChallenge(profile: profile, authenticator: authenticator, counts: challenge.counts)
        if let delegate, !(await delegate.didReceiveCustomChallenge(asked)) { throw DeviceAuthenticationError.cancelled }
        let data = try await custom.authenticate(asked)
        return try await answer(challenge, profile: profile, authenticator: authenticator, customData: data, deviceKey: key) {
            try await key.key.sign($0, reason: type)
        }
    }

    private func signInWithPIN(
        profile: UserProfile, authenticator: RegisteredAuthenticator, delegate: any AuthenticationDelegate
    ) async throws -> SignInResult {
        guard let stored = try await state().keys[authenticator.id]?.pin else { throw DeviceAuthenticationError.unknownProfile }
        var previousError: GatehouseError?
        while true {
            // The counts come from the server with each challenge: they are the server's, not a guess here.
            let challenge = try await fetchChallenge(profile: profile, authenticator: authenticator)
            let asked = PINChallenge(
                profile: profile, authenticator: authenticator, maxFailureCount: challenge.maxFailureCount,
                previousFailureCount: challenge.previousFailureCount, remainingFailureCount: challenge.remainingFailureCount,
                previousError: previousError)
            guard case .pin(let pin) = await delegate.didReceivePINChallenge(asked) else { throw DeviceAuthenticationError.cancelled }
            let key = try await Self.offMainWork { SoftwareDeviceKey(try stored.unlock(pin: pin)) }
            do {
                return try await answer(challenge, profile: profile, authenticator: authenticator, customData: nil) {
                    try await key.sign($0, reason: "pin")
                }
            } catch let error as GatehouseError where error.code == .invalidAuthenticatorResponse {
                previousError = error
            }
        }
    }

    /// A custom authenticator's key: a device key like DPoP's (the Secure Enclave's where there is
    /// one), or a software key registered before custom keys were made so.
    func customKey(_ stored: StoredDPoPKey) throws -> DPoPSigner.SignInKey {
        switch stored.kind {
        case .software: DPoPSigner.SignInKey(key: try SoftwareDeviceKey(stored: stored.data), stored: stored)
        case .platform: DPoPSigner.SignInKey(key: try client.configuration.dpopKeys.loadKey(stored.data), stored: stored)
        }
    }

    func find(_ type: AuthenticatorType, in profile: UserProfile) throws -> RegisteredAuthenticator {
        guard let found = profile.authenticators.first(where: { $0.type == type }) else { throw DeviceAuthenticationError.unknownProfile }
        return found
    }

    /// One challenge and its answer, for keys that need nothing from the challenge but its bytes.
    func exchange(
        profile: UserProfile, authenticator: RegisteredAuthenticator, deviceKey: DPoPSigner.SignInKey? = nil,
        sign: @Sendable (Data) async throws -> Data
    ) async throws -> SignInResult {
        let challenge = try await fetchChallenge(profile: profile, authenticator: authenticator)
        return try await answer(
            challenge, profile: profile, authenticator: authenticator, customData: nil, deviceKey: deviceKey, sign: sign)
    }

    func fetchChallenge(profile: UserProfile, authenticator: RegisteredAuthenticator) async throws -> DeviceChallenge {
        // Any other session ends first (another profile's, or a password session): one profile is
        // signed in at a time, and no session is left behind on the server.
        let state = try await state()
        if state.activeProfileID != profile.id, try await client.signedInUser() != nil {
            _ = try? await client.signOut()
            try await update {
                $0.activeProfileID = nil
                $0.activeAuthenticatorID = nil
            }
        }
        let request = try client.http.json(
            client.http.request("POST", "/v1/authenticators/challenge"),
            body: DeviceChallengeRequest(clientId: client.configuration.clientID, authenticatorId: authenticator.id))
        return try await deregisteringOnLoss(profile: profile, authenticator: authenticator) {
            try await client.http.send(request)
        }
    }

    /// `deviceKey`: the authenticator's own key when it can sign without the user (a custom
    /// authenticator's): the session is bound to it (DPoP) rather than to a key made for the session.
    /// PIN and biometric keys sign only with the user there, and proofs go with every request, so their
    /// sessions get a device key of their own.
    func answer(
        _ challenge: DeviceChallenge, profile: UserProfile, authenticator: RegisteredAuthenticator, customData: String?,
        deviceKey: DPoPSigner.SignInKey? = nil, sign: @Sendable (Data) async throws -> Data
    ) async throws -> SignInResult {
        let clientID = client.configuration.clientID
        let deviceID = try await state().deviceID
        let message = DeviceSignature.message(
            challengeID: challenge.challengeId, challenge: challenge.challenge, clientID: clientID, deviceID: deviceID,
            authenticatorID: authenticator.id)
        let signature = try await sign(message)
        let request = try client.http.json(
            client.http.request("POST", "/v1/authenticators/authenticate"),
            body: DeviceAuthenticationRequest(
                clientId: clientID, challengeId: challenge.challengeId, signature: PKCE.base64URL(signature), customData: customData))
        let tokens: TokenResponse = try await deregisteringOnLoss(profile: profile, authenticator: authenticator) {
            try await DPoPSigner.$requestKey.withValue(deviceKey) { try await client.http.send(request) }
        }
        let result = try await client.adopt(tokens)
        try await update {
            $0.activeProfileID = profile.id
            $0.activeAuthenticatorID = authenticator.id
        }
        return result
    }

    /// The server no longer knows the authenticator: forget it here too, and say so.
    private func deregisteringOnLoss<T: Sendable>(
        profile: UserProfile, authenticator: RegisteredAuthenticator, _ call: () async throws -> T
    ) async throws -> T {
        do {
            return try await call()
        } catch let error as GatehouseError where error.code == .deviceDeregistered {
            try await forget(authenticator, of: profile)
            // Its sessions ended on the server with it.
            if try await state().activeProfileID == profile.id {
                await client.end(.sessionRevoked)
                try await update {
                    $0.activeProfileID = nil
                    $0.activeAuthenticatorID = nil
                }
            }
            throw DeviceAuthenticationError.deregistered
        }
    }
}
