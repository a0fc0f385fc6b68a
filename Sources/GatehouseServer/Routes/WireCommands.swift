import GatehouseAPI
import GatehouseCore

// The app's JSON bodies, as the core's commands: the only place wire types meet the flows, so a flow
// never depends on how a request was carried (the app's JSON, the hosted page's form, a test).

extension LoginFlow.PasswordSignIn {
    init(_ wire: LoginRequest) {
        // A username names the account in place of the address (the password strategy tells them apart).
        self.init(
            clientID: wire.clientId, email: wire.username ?? wire.email, password: wire.password, scope: wire.scope, nonce: wire.nonce)
    }
}

extension SignupFlow.Registration {
    init(_ wire: SignupRequest) {
        self.init(
            clientID: wire.clientId, email: wire.email, password: wire.password, profile: wire.profile,
            acceptTerms: wire.acceptTerms == true, redirectTo: wire.redirectTo, codeChallenge: wire.codeChallenge,
            codeChallengeMethod: wire.codeChallengeMethod, username: wire.username)
    }
}

extension OTPFlow.CodeRequest {
    init(_ wire: OTPRequest) {
        self.init(clientID: wire.clientId, email: wire.email, phone: wire.phone, createUser: wire.createUser ?? true)
    }
}

extension MagicLinkFlow.LinkRequest {
    init(_ wire: MagicLinkRequest) {
        self.init(
            clientID: wire.clientId, email: wire.email, redirectTo: wire.redirectTo, codeChallenge: wire.codeChallenge,
            codeChallengeMethod: wire.codeChallengeMethod, createUser: wire.createUser ?? true, acceptTerms: wire.acceptTerms == true)
    }
}

extension OTPFlow.CodeSignIn {
    init(_ wire: OTPVerifyRequest) {
        self.init(
            clientID: wire.clientId, email: wire.email, phone: wire.phone, code: wire.code, scope: wire.scope, nonce: wire.nonce,
            acceptTerms: wire.acceptTerms == true)
    }
}

extension DeviceAuthenticationFlow.ChallengeRequest {
    init(_ wire: DeviceChallengeRequest) {
        self.init(clientID: wire.clientId, authenticatorID: wire.authenticatorId)
    }
}

extension DeviceAuthenticationFlow.Answer {
    init(_ wire: DeviceAuthenticationRequest) {
        self.init(
            clientID: wire.clientId, challengeID: wire.challengeId, signature: wire.signature, scope: wire.scope,
            customData: wire.customData)
    }
}

extension AccountFlow.PasswordChange {
    init(_ wire: PasswordChangeRequest) {
        self.init(currentPassword: wire.currentPassword, password: wire.password)
    }
}

extension DeviceAuthenticatorsFlow.Enrolment {
    init(_ wire: AuthenticatorRegistration) {
        self.init(
            type: wire.type, customType: wire.customType, deviceID: wire.deviceId, deviceName: wire.deviceName, publicKey: wire.publicKey)
    }
}

extension IdentitiesFlow.Link {
    init(_ wire: IdentityLinkRequest) {
        self.init(provider: wire.provider, idToken: wire.idToken, accessToken: wire.accessToken, nonce: wire.nonce)
    }
}
