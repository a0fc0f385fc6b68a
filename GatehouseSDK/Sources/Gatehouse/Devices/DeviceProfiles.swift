import Argon2
import Crypto
import Foundation
import GatehouseAPI

/// Device authenticators and the user profiles that own them (the Onegini model): a signed-in user
/// registers a PIN, biometric or custom authenticator once; later they sign in with it. The server
/// counts wrong answers and deletes the authenticator after the client's maximum, so a stolen device
/// gets that many guesses and no more. Several profiles can live on one device; signing one in
/// signs the current one out first.
///
/// The session itself is the ``AuthClient``'s: a successful sign-in becomes its session, and its
/// ``AuthClient/signOut(scope:)`` revokes that session on the server.
public actor DeviceProfiles {
    public struct Configuration: Sendable {
        /// Where profiles and key material are kept; `nil` (the default) keeps them across launches
        /// like the session: the Keychain on Apple platforms, a `0600` file on Linux
        /// (``defaultStore(baseURL:clientID:)``). ``InMemoryDeviceStore`` only when passed.
        public var store: (any DeviceStore)?
        public var pinPolicy: PINPolicy
        /// Argon2id cost of turning a PIN into its key mask; OWASP's minimum by default.
        public var pinKeyDerivation: Argon2Parameters
        public var biometricKeys: any BiometricKeyProvider
        public var customAuthenticators: [any CustomAuthenticator]
        /// Shown in the user's sessions list.
        public var deviceName: String?

        public init(
            store: (any DeviceStore)? = nil, pinPolicy: PINPolicy = PINPolicy(),
            pinKeyDerivation: Argon2Parameters = .owaspDefault, biometricKeys: (any BiometricKeyProvider)? = nil,
            customAuthenticators: [any CustomAuthenticator] = [], deviceName: String? = nil
        ) {
            self.store = store
            self.pinPolicy = pinPolicy
            self.pinKeyDerivation = pinKeyDerivation
            self.biometricKeys = biometricKeys ?? Self.platformBiometricKeys
            self.customAuthenticators = customAuthenticators
            self.deviceName = deviceName
        }

        static var platformBiometricKeys: any BiometricKeyProvider {
            #if canImport(LocalAuthentication) && canImport(CryptoKit) && (os(iOS) || os(macOS))
                if #available(iOS 13.0, macOS 10.15, tvOS 13.0, *) { return SecureEnclaveBiometricKeys() }
            #endif
            return SoftwareBiometricKeys()
        }
    }

    public nonisolated let client: AuthClient
    public nonisolated let configuration: Configuration
    /// The configured store, or the default one for the client.
    public nonisolated let store: any DeviceStore
    var cached: DeviceState?

    public init(client: AuthClient, configuration: Configuration = Configuration()) {
        self.client = client
        self.configuration = configuration
        self.store =
            configuration.store
            ?? Configuration.defaultStore(baseURL: client.configuration.baseURL, clientID: client.configuration.clientID)
    }

    // MARK: Profiles

    /// Every profile on this device.
    public func profiles() async throws -> [UserProfile] { try await state().profiles }

    /// The profile whose session the client holds, if any.
    public func activeProfile() async throws -> UserProfile? {
        let state = try await state()
        return state.profiles.first { $0.id == state.activeProfileID }
    }

    /// This installation's id, as the server knows it.
    public func deviceID() async throws -> String { try await state().deviceID }

    func state() async throws -> DeviceState {
        if let cached { return cached }
        let loaded = try await store.load() ?? DeviceState()
        cached = loaded
        return loaded
    }

    func update(_ change: (inout DeviceState) throws -> Void) async throws {
        var state = try await state()
        try change(&state)
        try await store.save(state)
        cached = state
    }

    // MARK: Registration

    /// Registers a PIN authenticator for the signed-in user, checked against the ``PINPolicy`` here.
    /// Only a masked seed is stored; see ``CamouflagedPINKey``. The session becomes one bound to it.
    @discardableResult
    public func registerPIN(_ pin: String) async throws -> UserProfile {
        let problems = configuration.pinPolicy.validate(pin)
        guard problems.isValid else { throw DeviceAuthenticationError.pinPolicy(problems) }
        let parameters = configuration.pinKeyDerivation
        let (stored, key) = try await Self.offMainWork {
            let created = try CamouflagedPINKey.create(pin: pin, parameters: parameters)
            return (created.stored, SoftwareDeviceKey(created.key))
        }
        return try await register(
            .pin, customType: nil, publicKey: key.publicKey, material: .init(pin: stored),
            sign: { try await key.sign($0, reason: "pin") })
    }

    /// Registers a biometric authenticator (a Secure Enclave key on Apple platforms).
    @discardableResult
    public func registerBiometric(reason: String = "Set up sign-in") async throws -> UserProfile {
        guard configuration.biometricKeys.isAvailable else { throw DeviceAuthenticationError.biometricsUnavailable }
        let key = try configuration.biometricKeys.makeKey()
        return try await register(
            .biometric, customType: nil, publicKey: key.publicKey, material: .init(biometric: key.stored),
            sign: { try await key.sign($0, reason: reason) })
    }

    /// Registers the custom authenticator of `type` given in the configuration.
    @discardableResult
    public func registerCustom(_ type: String) async throws -> UserProfile {
        guard configuration.customAuthenticators.contains(where: { $0.type == type }) else {
            throw DeviceAuthenticationError.unknownCustomType(type)
        }
        // The device key DPoP uses (the Secure Enclave's where there is one): the sessions this
        // authenticator starts are bound to it, so this device holds one key for both.
        let made = try client.configuration.dpopKeys.makeKey()
        let key = DPoPSigner.SignInKey(
            key: made, stored: StoredDPoPKey(kind: made is SoftwareDeviceKey ? .software : .platform, data: made.stored))
        return try await register(
            .custom, customType: type, publicKey: made.publicKey, material: .init(custom: made.stored, customKind: key.stored.kind),
            deviceKey: key, sign: { try await made.sign($0, reason: type) })
    }

    private func register(
        _ type: AuthenticatorType, customType: String?, publicKey: P256.Signing.PublicKey, material: DeviceState.KeyMaterial,
        deviceKey: DPoPSigner.SignInKey? = nil, sign: @Sendable (Data) async throws -> Data
    ) async throws -> UserProfile {
        guard let user = try await client.signedInUser() else {
            throw GatehouseError(code: GatehouseError.notSignedIn, status: nil, message: "Sign in before registering an authenticator.")
        }
        let deviceID = try await state().deviceID
        let body = AuthenticatorRegistration(
            type: type, customType: customType, deviceId: deviceID, deviceName: configuration.deviceName,
            publicKey: PKCE.base64URL(publicKey.x963Representation))
        let info: AuthenticatorInfo = try await client.authorized(
            try client.http.json(client.http.request("POST", "/v1/me/authenticators"), body: body))
        let registered = RegisteredAuthenticator(id: info.id, type: type, customType: customType)
        var profile =
            try await state().profiles.first { $0.userID == user.id.uuidString.lowercased() }
            ?? UserProfile(
                id: UUID().uuidString.lowercased(), userID: user.id.uuidString.lowercased(), email: user.email, authenticators: [])
        profile.authenticators.append(registered)
        let saved = profile
        try await update { state in
            state.keys[registered.id] = material
            state.profiles.removeAll { $0.id == saved.id }
            state.profiles.append(saved)
        }
        // Prove the key at once and make the session one bound to it; the session that registered ends.
        let previous = await client.currentAccessToken()
        // The session that registered is bound to its own key, which may not be the new session's.
        let previousKey = client.http.dpop.currentKey
        _ = try await exchange(profile: saved, authenticator: registered, deviceKey: deviceKey, sign: sign)
        if let previous {
            await DPoPSigner.$requestKey.withValue(previousKey) { await client.revokeQuietly(accessToken: previous) }
        }
        return saved
    }

    /// Changes the PIN: the old PIN is checked by the server (a wrong one counts like any other), then
    /// a new key is registered under the new PIN and the old authenticator deleted.
    public func changePIN(profile: UserProfile, from old: String, to new: String) async throws {
        let problems = configuration.pinPolicy.validate(new)
        guard problems.isValid else { throw DeviceAuthenticationError.pinPolicy(problems) }
        let previous = try find(.pin, in: profile)
        try await signIn(profile: profile, pin: old)
        try await registerPIN(new)
        try await deregister(previous, of: profile)
    }

    // MARK: Removal

    /// Deletes an authenticator on the server (as the signed-in user, who must own it) and here. When
    /// the current session was started with it, the server ends that session too, and so does this
    /// device.
    public func deregister(_ authenticator: RegisteredAuthenticator, of profile: UserProfile) async throws {
        do {
            try await client.authorized(client.http.request("DELETE", "/v1/me/authenticators/\(authenticator.id)"))
        } catch let error as GatehouseError where error.code == .notFound {
            // Already gone on the server.
        }
        let ended = try await state().activeAuthenticatorID == authenticator.id
        try await forget(authenticator, of: profile)
        if ended {
            await client.end(.userRequested)
            try await update {
                $0.activeProfileID = nil
                $0.activeAuthenticatorID = nil
            }
        }
    }

    /// Removes a profile: its authenticators are deleted on the server when it is the signed-in one,
    /// and its keys are erased here either way. Returns whether the server was told.
    @discardableResult
    public func remove(_ profile: UserProfile) async throws -> Bool {
        let signedIn = try await client.signedInUser() != nil
        let active = try await activeProfile()?.id == profile.id && signedIn
        var toldServer = active
        if active {
            // The one that started this session goes last: deleting it ends the session.
            let bound = try await state().activeAuthenticatorID
            let ordered = profile.authenticators.filter { $0.id != bound } + profile.authenticators.filter { $0.id == bound }
            for authenticator in ordered {
                do {
                    try await deregister(authenticator, of: profile)
                } catch {
                    toldServer = false
                }
            }
            _ = try? await client.signOut()
        }
        try await update { state in
            for authenticator in profile.authenticators { state.keys[authenticator.id] = nil }
            state.profiles.removeAll { $0.id == profile.id }
            if state.activeProfileID == profile.id {
                state.activeProfileID = nil
                state.activeAuthenticatorID = nil
            }
        }
        return toldServer
    }

    /// Signs the active profile out: revoked on the server when it can be reached (else
    /// ``LogoutOutcome/localOnly(_:)``). The profile and its authenticators stay for the next sign-in.
    /// While the session store cannot be read yet the answer is ``LogoutOutcome/localOnly(_:)`` with
    /// `store_unavailable`, and nothing changed anywhere: try again. It never throws, unlike
    /// ``AuthClient/signOut(scope:)``: the outcome already says everything that went wrong.
    @discardableResult
    public func signOut() async -> LogoutOutcome {
        let outcome: LogoutOutcome
        do {
            outcome = try await client.signOut()
        } catch let error as GatehouseError {
            // The session store cannot be read yet: nothing was ended, here or there, so the profile
            // stays active for when it can.
            return .localOnly(error)
        } catch {
            outcome = .notSignedIn
        }
        try? await update {
            $0.activeProfileID = nil
            $0.activeAuthenticatorID = nil
        }
        return outcome
    }

    /// Forgets everything on this device: signs out (on the server when possible), erases every profile
    /// and key. The authenticators stay registered on the server until the user deletes them there.
    public func disconnect() async throws {
        _ = try? await client.signOut()
        try await store.clear()
        cached = nil
    }

    func forget(_ authenticator: RegisteredAuthenticator, of profile: UserProfile) async throws {
        try await update { state in
            state.keys[authenticator.id] = nil
            guard let index = state.profiles.firstIndex(where: { $0.id == profile.id }) else { return }
            state.profiles[index].authenticators.removeAll { $0.id == authenticator.id }
        }
    }

    // MARK: Helpers

    /// Argon2id takes a noticeable moment: keep it off the caller's executor.
    static func offMainWork<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await Task.detached(priority: .userInitiated) { try work() }.value
    }
}
