import Foundation
import GatehouseAPI

/// Sign-up with email and password.
public struct SignupFlow: Sendable {
    let services: CoreServices
    let verification: VerificationMessages

    public init(services: CoreServices) {
        self.services = services
        self.verification = VerificationMessages(services: services)
    }

    public enum Outcome: Sendable {
        case signedIn(TokenResponse)
        case verificationRequired(User)
        /// The hosted sign-up page's: the account exists and the browser's session started.
        case started(SignedIn)
    }

    /// What the transaction did; the token response is made after the commit.
    private enum Step: Sendable {
        case pending(User)
        case started(SessionStart)
    }

    /// `target`: what a sign-up that needs no verification starts; an app session unless a browser, not
    /// an app, is signing up (the hosted page).
    /// A sign-up as the core takes it, whatever carried it (the app's JSON, the hosted page's form).
    public struct Registration: Sendable {
        public var clientID: String?
        public var email: String
        public var password: String
        public var profile: Profile?
        public var acceptTerms: Bool
        /// Where the verification link returns, with the app's PKCE challenge.
        public var redirectTo: String?
        public var codeChallenge: String?
        public var codeChallengeMethod: String?
        /// On a client with `usernames` on: the account's username, as typed.
        public var username: String?

        public init(
            clientID: String?, email: String, password: String, profile: Profile? = nil, acceptTerms: Bool = false,
            redirectTo: String? = nil, codeChallenge: String? = nil, codeChallengeMethod: String? = nil, username: String? = nil
        ) {
            self.clientID = clientID
            self.email = email
            self.password = password
            self.profile = profile
            self.acceptTerms = acceptTerms
            self.redirectTo = redirectTo
            self.codeChallenge = codeChallenge
            self.codeChallengeMethod = codeChallengeMethod
            self.username = username
        }
    }

    public func signup(_ request: Registration, meta: RequestMeta, target: SessionTarget? = nil) async throws -> Outcome {
        let client = try await services.clients.resolve(request.clientID)
        let now = services.clock.now()
        var result = ValidationResult()
        let email = EmailAddress.validate(request.email, into: &result)
        let username = Self.username(request.username, client: client, into: &result)
        services.passwordScreen.localCheck(request.password, email: email, appName: client.name, into: &result)
        var profile = request.profile ?? Profile()
        ProfileValidator().validate(profile, now: now, into: &result)
        MetadataSchema.check(profile.metadata, client: client, into: &result)
        let pkce = try validateRedirect(request, client: client, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        try await services.rateLimits.consume(.signup, ip: meta.ipAddress, persistence: services.persistence, now: now)
        try await services.botChallenge.require(.signup, client: client, meta: meta)
        try await services.passwordScreen.requireUnbreached(request.password)
        let changes = try await services.hooks.before(
            HookEvent(
                point: .signup, clientID: client.id, method: CredentialType.password.rawValue, identifier: email, profile: profile,
                meta: meta))
        if let changed = changes.profile {
            profile.merge(changed)
            try ProfileValidator.requireValid(profile, now: now)
        }

        let hash = try await services.password.hash(request.password)
        let user = UserRecord(
            // Not verified even when the client does not require it: nothing proved the address yet, and
            // ID tokens must not say otherwise.
            email: email, emailVerified: false, profile: profile, appMetadata: changes.appMetadata, createdAt: now,
            hasPassword: true, username: username)
        let created = HookEvent(
            point: .signup, clientID: client.id, method: CredentialType.password.rawValue, identifier: email, userID: user.id,
            profile: profile, meta: meta)
        let verificationRequired = client.settings.emailVerification == .required

        let issuer = services.issuer
        let starter = services.starter
        let appTarget = target == nil
        let target = target ?? .app(.init(scopes: SessionIssuer.grant(requested: nil, client: client)))
        let step: Step
        do {
            step = try await services.persistence.transaction { stores in
                // Unlike an address, a username has no mailbox to send the owner a notice through:
                // a taken one is said so, enumeration protection or not (usernames are public names).
                if let username, try await stores.users.find(username: username) != nil {
                    throw GatehouseError.validation(
                        field: "username", code: .alreadyRegistered, message: "This username is taken. Choose another.")
                }
                try await stores.users.insert(user)
                try await stores.credentials.insert(try PasswordStrategy.credential(for: user, hash: hash, now: now))
                try await services.recordEvent(created, stores: stores)
                if request.acceptTerms {
                    try await TermsAcceptance.record(userID: user.id, client: client, at: now, stores: stores)
                }
                if verificationRequired {
                    try await verification.issue(
                        user: user, client: client, redirectTo: request.redirectTo, pkce: pkce, meta: meta,
                        stores: stores)
                    return .pending(user.wire)
                }
                return .started(
                    try await starter.start(
                        Authentication(userID: user.id, amr: services.password.amr, isNew: true), client: client, target: target,
                        meta: meta,
                        stores: stores))
            }
        } catch StoreError.conflict {
            return try await alreadyRegistered(email: email, profile: profile, client: client, meta: meta, now: now)
        }
        await services.hooks.after(created)
        switch step {
        case .pending(let pending):
            try await startResendCooldown(email: email, client: client)
            return .verificationRequired(pending)
        case .started(let start):
            let session = try start.get()
            guard appTarget else { return .started(SignedIn(started: session, user: user, client: client, isNew: true)) }
            let started = try session.app()
            // After the commit, so the response sees what the transaction wrote (terms accepted).
            return .signedIn(
                try await issuer.response(
                    session: started.session, refreshToken: started.refreshToken, client: client, user: user, isNew: true))
        }
    }

    /// The normalized username the client takes, or nil; a field error when the client does not use
    /// usernames and one was sent, or requires one and none was.
    static func username(_ raw: String?, client: ClientRecord, into result: inout ValidationResult) -> String? {
        switch (client.settings.usernames, raw) {
        case (.off, nil), (.optional, nil): return nil
        case (.off, .some):
            result.invalidate(field: "username", code: .invalidValue, message: "This app does not use usernames.")
            return nil
        case (.required, nil): return Username.validate("", into: &result)
        case (_, .some(let raw)): return Username.validate(raw, into: &result)
        }
    }

    /// With enumeration protection on and verification required, the answer for a taken address is the
    /// same 201 as for a new one, and the owner is told by mail. When verification is off a new account
    /// is signed in at once, so the difference cannot be hidden and the answer is 409.
    private func alreadyRegistered(
        email: String, profile: Profile, client: ClientRecord, meta: RequestMeta, now: Date
    )
        async throws
        -> Outcome
    {
        guard client.settings.enumerationProtection.isOn, client.settings.emailVerification == .required else {
            throw GatehouseError.alreadyRegistered
        }
        try await services.persistence.transaction { stores in
            try await verification.notifyExistingAccount(email: email, client: client, meta: meta, stores: stores)
        }
        try await startResendCooldown(email: email, client: client)
        // Everything a new account would echo, so the two answers cannot be told apart.
        let decoy = UserRecord(email: email, profile: profile, createdAt: now, hasPassword: true)
        return .verificationRequired(decoy.wire)
    }

    /// The sign-up's own mail counts as the first send of `POST /v1/verification`, so a resend right
    /// after it waits out the cool-down. Done for a taken address too, so the two answer alike. A
    /// cool-down already running (a resend before this sign-up) is no reason to fail the sign-up.
    private func startResendCooldown(email: String, client: ClientRecord) async throws {
        do {
            try await SendCooldown(services: services).claim(
                VerificationMessages.cooldownKey(clientID: client.id, email: email), interval: services.settings.sendCooldown)
        } catch let error as GatehouseError where error.category == .rateLimited {}
    }

    private func validateRedirect(
        _ request: Registration, client: ClientRecord, into result: inout ValidationResult
    )
        throws -> PKCEChallenge?
    {
        if let redirect = request.redirectTo, !client.redirectURIs.contains(redirect) {
            result.invalidate(
                field: "redirect_to", code: .invalidValue, message: "redirect_to is not registered for this client.")
        }
        guard let challenge = request.codeChallenge else {
            if request.redirectTo != nil, client.kind == .public {
                // The code in the redirect travels through the OS; without PKCE any app could redeem it.
                result.invalidate(
                    field: "code_challenge", code: .required,
                    message: "A public client must send a PKCE code_challenge with redirect_to.")
            } else if request.codeChallengeMethod != nil {
                result.invalidate(field: "code_challenge", code: .required, message: "code_challenge is missing.")
            }
            return nil
        }
        guard let pkce = PKCEChallenge(challenge: challenge, method: request.codeChallengeMethod ?? "S256") else {
            result.invalidate(
                field: "code_challenge", code: .invalidFormat,
                message: "Use an S256 code_challenge: 43 base64url characters.")
            return nil
        }
        return pkce
    }
}
