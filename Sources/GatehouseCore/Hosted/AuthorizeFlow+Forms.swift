import Foundation
import GatehouseAPI

/// The forms of the hosted pages: each loads its flow (this browser's, at its step), does what the
/// form asks through the flow that owns the rule (password, sign-up, code, provider, terms, profile,
/// consent), and moves the flow on.
extension AuthorizeFlow {
    /// The password form. Returns the browser's new session cookie when one began.
    public func signIn(
        _ id: UUID, binding: String, email: String, password: String, browser: BrowserPrincipal?, meta: RequestMeta
    )
        async throws -> (Outcome, cookie: String?)
    {
        let (flow, state, _) = try await load(id, binding: binding, step: .started)
        return try await authenticated(flow, state) {
            try await FlowRunner(services: services).signIn(
                with: services.password, submission: PasswordStrategy.Submission(identifier: email, password: password),
                request: FlowRunner.SignInRequest(clientID: flow.clientID, meta: meta), target: browserTarget(flow, browser))
        }
    }

    /// The sign-up form. A new account signs the browser in unless its address must be verified first
    /// (then nil: the page says to check the mail).
    public func signUp(
        _ id: UUID, binding: String, email: String, password: String, acceptTerms: Bool, username: String? = nil,
        browser: BrowserPrincipal?, meta: RequestMeta
    )
        async throws -> (Outcome, cookie: String?)?
    {
        let (flow, state, _) = try await load(id, binding: binding, step: .started)
        let signUp = SignupFlow(services: services)
        let request = SignupFlow.Registration(
            clientID: flow.clientID, email: email, password: password, acceptTerms: acceptTerms, username: username)
        let target = browserTarget(flow, browser)
        do {
            guard case .started(let signedIn) = try await signUp.signup(request, meta: meta, target: target) else { return nil }
            return try await authenticated(flow, state) { signedIn }
        } catch let error as GatehouseError where error.code == .mfaRequired {
            return try await authenticated(flow, state) { throw error }
        }
    }

    /// A sign-in on this flow's pages signs the browser in, and the flow goes on from there.
    func browserTarget(_ flow: FlowRecord, _ browser: BrowserPrincipal?) -> SessionTarget {
        .browser(.init(current: browser?.session, authorizeFlowID: flow.id))
    }

    /// The browser signed in: the flow goes on. A sign-in that needs a second factor waits on the
    /// flow's factor page instead, with no session yet.
    func authenticated(
        _ flow: FlowRecord, _ state: State, _ signIn: () async throws -> SignedIn
    ) async throws
        -> (Outcome, cookie: String?)
    {
        let signedIn: SignedIn
        do {
            signedIn = try await signIn()
        } catch let error as GatehouseError where error.code == .mfaRequired {
            guard let pending = error.pendingFlow else { throw error }
            return (try await awaitFactor(flow, state, pending), nil)
        }
        let browser = try signedIn.started.browser()
        return (try await authenticated(flow, state, session: browser.session, user: signedIn.user, isNew: signedIn.isNew), browser.cookie)
    }

    /// The one-time-code form: sends a code to an email address or phone number (the client's
    /// `email_otp` / `sms_otp`), with the same answer whether or not it has an account.
    public func sendCode(_ id: UUID, binding: String, identifier: String, meta: RequestMeta) async throws -> OTPSentResponse {
        let (flow, _, _) = try await load(id, binding: binding, step: .started)
        let (email, phone) = Self.identifier(identifier)
        return try await OTPFlow(services: services).send(
            OTPFlow.CodeRequest(clientID: flow.clientID, email: email, phone: phone), meta: meta)
    }

    /// The code the user received: signs the browser in (an unknown identifier gets an account).
    public func verifyCode(
        _ id: UUID, binding: String, identifier: String, code: String, browser: BrowserPrincipal?, meta: RequestMeta
    )
        async throws -> (Outcome, cookie: String?)
    {
        let (flow, state, _) = try await load(id, binding: binding, step: .started)
        let (email, phone) = Self.identifier(identifier)
        return try await authenticated(flow, state) {
            try await OTPFlow(services: services).verify(
                OTPFlow.CodeSignIn(clientID: flow.clientID, email: email, phone: phone, code: code), meta: meta,
                target: browserTarget(flow, browser))
        }
    }

    /// An address with `@` is an email address; anything else is taken for a phone number.
    static func identifier(_ raw: String) -> (email: String?, phone: String?) {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        return trimmed.contains("@") ? (trimmed, nil) : (nil, trimmed)
    }

    /// Whether the sign-in page of flow `id` is still this browser's and waiting (before a provider's
    /// answer signs anyone in); throws otherwise.
    public func requireSignInPage(_ id: UUID, binding: String) async throws {
        _ = try await load(id, binding: binding, step: .started)
    }

    /// A provider's sign-in, started from the sign-in page, came back with this browser signed in.
    public func federated(_ id: UUID, binding: String, session: BrowserSessionRecord, user: UserRecord, isNew: Bool) async throws -> Outcome
    {
        let (flow, state, _) = try await load(id, binding: binding, step: .started)
        return try await authenticated(flow, state, session: session, user: user, isNew: isNew)
    }

    /// "Continue as …": the browser's session, chosen on the sign-in page.
    public func continueAs(_ id: UUID, binding: String, browser: BrowserPrincipal) async throws -> Outcome {
        let (flow, state, _) = try await load(id, binding: binding, step: .started)
        guard sessionSuffices(browser, for: state.request, at: services.clock.now()) else {
            throw GatehouseError.forbidden("Sign in again.")
        }
        var next = state
        authenticate(&next, with: browser.session, fresh: false)
        return try await advance(flow, next, user: browser.user, session: browser.session)
    }

    public func acceptTerms(_ id: UUID, binding: String, accepted: Bool, browser: BrowserPrincipal?) async throws -> Outcome {
        let (flow, state, client) = try await load(id, binding: binding, step: .terms, browser: browser)
        guard accepted else { throw GatehouseError.validation(field: "accept", code: .required, message: "Accept the terms to continue.") }
        let user = try await user(of: flow)
        let now = services.clock.now()
        try await services.persistence.transaction { stores in
            try await TermsAcceptance.record(userID: user.id, client: client, at: now, stores: stores)
        }
        return try await advance(flow, state, user: user, session: browser?.session)
    }

    /// The required-fields form: only the missing fields are taken, checked as a profile update is.
    public func submitFields(
        _ id: UUID, binding: String, values: [String: String], browser: BrowserPrincipal?, meta: RequestMeta
    )
        async throws -> Outcome
    {
        let (flow, state, client) = try await load(id, binding: binding, step: .fields, browser: browser)
        let user = try await user(of: flow)
        var profile = Profile()
        var result = ValidationResult()
        for field in RequiredFieldsPolicy.missing(user: user, client: client) where Profile.fieldNames.contains(field) {
            let value = values[field]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            if value.isEmpty {
                result.invalidate(field: field, code: .required, message: "This field is required.")
                continue
            }
            profile[field: field] = value
        }
        guard result.isValid else { throw GatehouseError.validation(result) }
        _ = try await AccountFlow(services: services).updateProfile(userID: user.id, clientID: client.id, profile, meta: meta)
        return try await advance(flow, state, user: try await self.user(of: flow), session: browser?.session)
    }

    public func consent(_ id: UUID, binding: String, allow: Bool, browser: BrowserPrincipal?) async throws -> Outcome {
        let (flow, state, client) = try await load(id, binding: binding, step: .consent, browser: browser)
        guard allow else { return try await deny(flow, state) }
        let user = try await user(of: flow)
        let now = services.clock.now()
        let scopes = state.request.scopes
        try await services.persistence.transaction { stores in
            let earlier = try await stores.consents.find(userID: user.id, clientID: client.id)?.scopes ?? []
            let granted = earlier + scopes.filter { !earlier.contains($0) }
            try await stores.consents.upsert(ConsentRecord(userID: user.id, clientID: client.id, scopes: granted, grantedAt: now))
        }
        var next = state
        next.consented = true
        return try await advance(flow, next, user: user, session: browser?.session)
    }

    /// Cancel on any page: the client hears `access_denied`.
    public func cancel(_ id: UUID, binding: String) async throws -> Outcome {
        let (flow, state, _) = try await load(id, binding: binding)
        return try await deny(flow, state)
    }
}
