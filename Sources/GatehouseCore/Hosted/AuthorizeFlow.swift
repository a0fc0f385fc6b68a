import Foundation
import GatehouseAPI

extension FlowStep {
    /// Hosted sign-in: the client's terms are newer than what the user accepted.
    public static let terms = FlowStep(rawValue: "terms")
    /// Hosted sign-in: the profile lacks a field the client requires.
    public static let fields = FlowStep(rawValue: "fields")
    /// Hosted sign-in: a third-party client wants scopes the user has not granted it.
    public static let consent = FlowStep(rawValue: "consent")
    /// Hosted sign-in: the first factor was right; the browser signs in once a second completes it.
    public static let secondFactor = FlowStep(rawValue: "second_factor")
}

/// `/oauth/authorize` through the hosted pages (the forms of its pages: `AuthorizeFlow+Forms.swift`): a persisted flow that signs the browser in (or finds
/// it signed in), then walks it through terms, required fields and consent, and answers the client
/// with a code. Knows nothing of HTTP: the server renders ``FlowStep``s as pages.
public struct AuthorizeFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// What the flow keeps between pages.
    struct State: Codable {
        var request: AuthorizationRequest
        var browserSessionID: UUID?
        var authTime: Date?
        var amr: [String]?
        /// The user authenticated in this flow (acr 1), rather than a session cookie standing in (acr 0).
        var fresh: Bool?
        /// Consent was given in this flow (`prompt=consent` asks once, not forever).
        var consented: Bool?
        /// The flow continues an emailed link rather than a browser sign-in: its code carries the link's
        /// proof and no browser session.
        var linkAMR: [String]?
        /// The sign-in in this flow made the account: the client's token response says `is_new`.
        var isNew: Bool?
        /// The sign-in waiting for a second factor (kept here, never shown to the browser), and the
        /// factors that may complete it.
        var pendingFactor: UUID?
        var factors: [String]?
        /// The user has no factor: the factor page enrols one, and its first code completes the sign-in.
        var enrol: Bool?
        /// The recovery codes of a factor enrolled in this flow, sealed, until their page is passed.
        var sealedRecoveryCodes: String?
    }

    public enum Outcome: Sendable {
        /// Back to the client.
        case respond(AuthorizationResponse)
        /// A page of the flow: render its step.
        case show(UUID)
    }

    /// A page's content.
    public struct Page: Sendable {
        public var flow: FlowRecord
        public var request: AuthorizationRequest
        public var client: ClientRecord
        public var user: UserRecord?
        public var missingFields: [String]
        /// A signed-in browser the user may continue as (sign-in page, `prompt=select_account`).
        public var continueAs: UserRecord?
        /// The factors that may complete a sign-in waiting for its second (the factor page).
        public var factors: [String]
        /// The factor page enrols the user's first factor rather than asking for one.
        public var enrol: Bool
        /// The authenticator app being enrolled (the factor page in enrolment), shown as a QR code.
        public var enrolment: TOTPEnrolment?
        /// The recovery codes of the factor just enrolled (their page), shown once.
        public var recoveryCodes: [String]
        /// What a passkey answers: the sign-in page's challenge when the client offers passkeys, or the
        /// waiting sign-in's with the user's passkeys on a factor page that offers one.
        public var passkeyOptions: PublicKeyCredentialRequestOptions?
    }

    // MARK: Starting

    /// Checks the request; answers at once when the browser's session suffices, else starts a flow.
    /// Throws ``AuthorizationRequest/Untrusted`` when nothing proves where to send an error.
    public func begin(
        _ parameters: [String: String], browser: BrowserPrincipal?, binding: String, meta: RequestMeta
    ) async throws -> Outcome {
        let request: AuthorizationRequest
        let client: ClientRecord
        do {
            if let pushed = parameters["request_uri"] {
                // RFC 9126 §4: the pushed request is the whole request; the query's other parameters
                // are ignored.
                (request, client) = try await PushedRequests(services: services).take(pushed, clientID: parameters["client_id"])
            } else {
                (request, client) = try await AuthorizationRequest.parse(parameters, services: services)
            }
        } catch let refused as AuthorizationRequest.Refused {
            return .respond(
                .error(
                    refused.error, refused.description, redirectURI: refused.redirectURI, mode: refused.mode, state: refused.state,
                    issuer: services.tokens.issuer))
        }
        return try await begin(request, client: client, browser: browser, binding: binding, meta: meta)
    }

    /// A device's approval (RFC 8628) typed on `/device`: the same sign-in, ending on the consent page.
    public func beginDevice(userCode: String, browser: BrowserPrincipal?, binding: String, meta: RequestMeta) async throws -> Outcome {
        let devices = DeviceAuthorizations(services: services)
        let (record, client) = try await devices.pending(userCode: userCode)
        return try await begin(try devices.authorizationRequest(record), client: client, browser: browser, binding: binding, meta: meta)
    }

    private func begin(
        _ request: AuthorizationRequest, client: ClientRecord, browser: BrowserPrincipal?, binding: String, meta: RequestMeta
    ) async throws -> Outcome {
        let now = services.clock.now()
        // A hint names the user the client expects (OIDC Core §3.1.2.1): another user's session does
        // not answer for them.
        let usable = browser.flatMap { principal -> BrowserPrincipal? in
            guard sessionSuffices(principal, for: request, at: now) else { return nil }
            if let subject = request.hintSubject, subject != services.tokens.subjects.subject(of: principal.user.id, for: client) {
                return nil
            }
            return principal
        }
        if request.prompt.contains("none") {
            guard let usable else { return refuse(request, "login_required", "The user is not signed in.") }
            var state = State(request: request)
            authenticate(&state, with: usable.session, fresh: false)
            let next = try await nextStep(user: usable.user, client: client, state: state)
            switch next {
            case nil:
                do {
                    return .respond(try await finish(flowID: nil, state: state, userID: usable.user.id, client: client))
                } catch is ShortOfRequirement {
                    return refuse(request, "interaction_required", "A stronger sign-in is required.")
                }
            case .consent?: return refuse(request, "consent_required", "The user has not consented to these scopes.")
            default: return refuse(request, "interaction_required", "The user must accept terms or complete the profile.")
            }
        }
        var state = State(request: request)
        var step = FlowStep.started
        var userID: UUID?
        if let usable, !request.prompt.contains("select_account") {
            authenticate(&state, with: usable.session, fresh: false)
            guard let next = try await nextStep(user: usable.user, client: client, state: state) else {
                do {
                    return .respond(try await finish(flowID: nil, state: state, userID: usable.user.id, client: client))
                } catch let short as ShortOfRequirement {
                    // The session's own sign-in is the first factor; the flow waits on its factor page.
                    try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: now)
                    let id = try await create(
                        state: state, step: .started, userID: usable.user.id, client: client, binding: binding, meta: meta)
                    let (flow, _, _) = try await load(id, binding: binding, step: .started)
                    return try await stepUp(flow, state, user: usable.user, session: usable.session, factors: short.factors, client: client)
                }
            }
            step = next
            userID = usable.user.id
        }
        // Each flow is a row: counted per address block like a social sign-in started in the browser,
        // so a flood of authorization requests cannot fill the table.
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: now)
        return .show(try await create(state: state, step: step, userID: userID, client: client, binding: binding, meta: meta))
    }

    /// A verification link followed in a browser, for a client that still needs the user's terms or
    /// fields: the same pages, then the code the link would have carried. Nil when nothing is needed.
    public func continueLink(
        user: UserRecord, client: ClientRecord, redirectURI: String, pkce: PKCEChallenge?, amr: [String], isNew: Bool, binding: String
    ) async throws -> UUID? {
        var state = Self.linkState(client: client, redirectURI: redirectURI, pkce: pkce)
        state.linkAMR = amr
        state.isNew = isNew ? true : nil
        guard let next = try await nextStep(user: user, client: client, state: state) else { return nil }
        return try await create(state: state, step: next, userID: user.id, client: client, binding: binding, meta: RequestMeta())
    }

    /// Whether a verification link for `client` must go through its pages (terms, fields, a third
    /// party's consent) before the app gets its code.
    public func linkNeedsPages(user: UserRecord, client: ClientRecord) async throws -> Bool {
        try await nextStep(user: user, client: client, state: Self.linkState(client: client, redirectURI: "", pkce: nil)) != nil
    }

    private static func linkState(client: ClientRecord, redirectURI: String, pkce: PKCEChallenge?) -> State {
        var state = State(
            request: AuthorizationRequest(
                clientID: client.id, redirectURI: redirectURI, responseMode: .query, state: nil,
                scopes: SessionIssuer.grant(requested: nil, client: client), pkce: pkce))
        // A first-party client's verification link is its own sign-up: nothing to consent to. A third
        // party's still asks.
        state.consented = client.settings.thirdParty.isOn ? nil : true
        return state
    }

    private func create(
        state: State, step: FlowStep, userID: UUID?, client: ClientRecord, binding: String, meta: RequestMeta
    ) async throws -> UUID {
        let request = state.request
        return try await FlowRunner(services: services).begin(
            .authorize, client: client, step: step, userID: userID, browserSessionID: state.browserSessionID,
            // A device's approval sends the browser nowhere: its code stays on the server (no redirect URI).
            redirectURI: request.responseMode == .device ? nil : request.redirectURI, pkce: request.pkce, nonce: request.nonce,
            state: request.state, data: try Self.encode(state),
            binding: binding, meta: meta
        ).flow.id
    }

    /// Whether a browser's session can stand in for signing in: no `prompt=login`, and recent enough
    /// for `max_age`.
    func sessionSuffices(_ browser: BrowserPrincipal, for request: AuthorizationRequest, at now: Date) -> Bool {
        if request.prompt.contains("login") { return false }
        if let maxAge = request.maxAge, now.timeIntervalSince(browser.session.authTime) > Double(maxAge) { return false }
        return true
    }

    func authenticate(_ state: inout State, with session: BrowserSessionRecord, fresh: Bool) {
        state.browserSessionID = session.id
        state.authTime = session.authTime
        state.amr = session.amr
        state.fresh = fresh
    }

    private func refuse(_ request: AuthorizationRequest, _ error: String, _ description: String) -> Outcome {
        .respond(
            .error(
                error, description, redirectURI: request.redirectURI, mode: request.responseMode, state: request.state,
                issuer: services.tokens.issuer))
    }

    // MARK: Pages

    /// The flow behind a page, for this browser only.
    public func page(_ id: UUID, binding: String, browser: BrowserPrincipal?) async throws -> Page {
        let (flow, state, client) = try await load(id, binding: binding, browser: browser)
        let user = try await flow.userID.asyncMap { id in try await services.persistence.read { try await $0.users.find(id: id) } } ?? nil
        let content = try await factorPageContent(flow, state)
        var continueAs: UserRecord?
        if flow.step == .started, let browser, sessionSuffices(browser, for: state.request, at: services.clock.now()) {
            continueAs = browser.user
        }
        let factors = flow.step == .secondFactor ? state.factors ?? [] : []
        var passkeyOptions: PublicKeyCredentialRequestOptions?
        if flow.step == .started, client.settings.methods.contains("passkey") {
            passkeyOptions = self.passkeyOptions(for: flow.id)
        } else if factors.contains(PasskeyFactor.factorID), let pending = state.pendingFactor {
            passkeyOptions = try await SecondFactorFlow(services: services).passkeyOptions(flowID: pending).publicKey
        }
        return Page(
            flow: flow, request: state.request, client: client, user: user,
            missingFields: user.map { RequiredFieldsPolicy.missing(user: $0, client: client).filter(Profile.fieldNames.contains) } ?? [],
            continueAs: continueAs, factors: factors, enrol: flow.step == .secondFactor && state.enrol == true, enrolment: content.0,
            recoveryCodes: content.1, passkeyOptions: passkeyOptions)
    }

    // MARK: Steps

    func deny(_ flow: FlowRecord, _ state: State) async throws -> Outcome {
        _ = try await FlowRunner(services: services).complete(flow.id)
        if state.request.responseMode == .device, let userCodeHash = state.request.state {
            _ = try await services.persistence.transaction {
                try await $0.devices.decide(userCodeHash: userCodeHash, status: .denied, sealedCode: nil)
            }
        }
        return refuse(state.request, "access_denied", "The user declined.")
    }

    func authenticated(
        _ flow: FlowRecord, _ state: State, session: BrowserSessionRecord, user: UserRecord, isNew: Bool
    ) async throws -> Outcome {
        var next = state
        authenticate(&next, with: session, fresh: true)
        next.isNew = isNew ? true : nil
        return try await advance(flow, next, user: user, session: session)
    }

    /// Moves the flow to the next page it needs, or finishes it. `session`: the browser's, when the
    /// caller has it (a step-up needs it to stand for the first factor).
    func advance(_ flow: FlowRecord, _ state: State, user: UserRecord, session: BrowserSessionRecord? = nil) async throws -> Outcome {
        let client = try await services.clients.resolve(flow.clientID)
        guard let next = try await nextStep(user: user, client: client, state: state) else {
            do {
                return .respond(try await finish(flowID: flow.id, state: state, userID: user.id, client: client))
            } catch let short as ShortOfRequirement {
                guard let session, session.id == state.browserSessionID else { throw GatehouseError.reauthenticationRequired }
                return try await stepUp(flow, state, user: user, session: session, factors: short.factors, client: client)
            }
        }
        _ = try await FlowRunner(services: services).advance(flow, to: next, userID: user.id, data: try Self.encode(state))
        return .show(flow.id)
    }

    /// What the user must still do before the client gets a code: terms, then fields, then consent.
    func nextStep(user: UserRecord, client: ClientRecord, state: State) async throws -> FlowStep? {
        // Consent is read only for third parties: single sign-on into the operator's own clients (the
        // common case) pays for one read here.
        // A device's approval always asks: the person must see which client they let in on the device.
        let asksConsent = (client.settings.thirdParty.isOn || state.request.responseMode == .device) && state.consented != true
        let (agreement, consent) = try await services.persistence.read { stores in
            (
                try await stores.agreements.find(userID: user.id, clientID: client.id),
                asksConsent ? try await stores.consents.find(userID: user.id, clientID: client.id) : nil
            )
        }
        if !AgreementRecord.isUpToDate(agreement, settings: client.settings) { return .terms }
        // The page asks for profile fields; a phone number is proved by a code in the app, which learns
        // it is missing from the token response's `missing_required_fields`.
        if RequiredFieldsPolicy.missing(user: user, client: client).contains(where: Profile.fieldNames.contains) { return .fields }
        if asksConsent {
            if state.request.prompt.contains("consent") || !(consent?.covers(state.request.scopes) ?? false) { return .consent }
        }
        return nil
    }

    /// Uses the flow up (once) and issues the code.
    private func finish(flowID: UUID?, state: State, userID: UUID, client: ClientRecord) async throws -> AuthorizationResponse {
        let now = services.clock.now()
        let request = state.request
        let hosted: HostedGrant? =
            if let browserSessionID = state.browserSessionID {
                HostedGrant(
                    scopes: request.scopes, nonce: request.nonce, authTime: state.authTime ?? now,
                    acr: Self.acr(amr: state.amr ?? [], fresh: state.fresh == true), browserSessionID: browserSessionID,
                    claims: request.claims)
            } else { nil }
        let authentication = Authentication(userID: userID, amr: state.linkAMR ?? state.amr ?? [], isNew: state.isNew == true)
        let target = SessionTarget.authorizationCode(.init(redirectURI: request.redirectURI, pkce: request.pkce, hosted: hosted))
        let starter = services.starter
        let meta = RequestMeta()
        // Short of what the client or the user requires (a browser session from before the requirement):
        // nothing is kept, the flow included, so the caller can lead the browser to a second factor.
        let start = { @Sendable (stores: any Stores) async throws -> StartedSession in
            switch try await starter.start(
                authentication, client: client, target: target, meta: meta, stores: stores, asked: request.askedLevel)
            {
            case .started(let started): return started
            case .factorRequired(let pending): throw ShortOfRequirement(factors: pending.factors)
            }
        }
        // A device's approval keeps the code for the device, in the same transaction: approved and
        // minted together, or neither.
        let secret = services.secret
        let startAndKeep = { @Sendable (stores: any Stores) async throws -> StartedSession in
            let started = try await start(stores)
            if request.responseMode == .device {
                guard let userCodeHash = request.state,
                    try await stores.devices.decide(
                        userCodeHash: userCodeHash, status: .approved, sealedCode: try secret.seal(Data(try started.code().utf8)))
                else { throw GatehouseError.codeExpired }
            }
            return started
        }
        let started =
            if let flowID {
                try await FlowRunner(services: services).complete(flowID) { _, stores in try await startAndKeep(stores) }
            } else {
                try await services.persistence.transaction { stores in try await startAndKeep(stores) }
            }
        if request.responseMode == .device {
            return AuthorizationResponse(redirectURI: "", mode: .device, fields: [("device", "approved")])
        }
        return .code(try started.code(), for: request, issuer: services.tokens.issuer)
    }

    // MARK: Loading

    static let gone = GatehouseError.flowExpired

    /// The flow, for this browser only. Past sign-in, the browser must still be signed in with the
    /// session that signed the flow in: a flow left on its terms page must not finish for whoever uses
    /// the browser after a sign-out (a verification link's flow has no browser session to match).
    func load(
        _ id: UUID, binding: String, step: FlowStep? = nil, browser: BrowserPrincipal? = nil
    ) async throws
        -> (FlowRecord, State, ClientRecord)
    {
        // Only the browser that started the flow may go on with it.
        let flow = try await FlowRunner(services: services).load(id, kind: .authorize, binding: binding, step: step)
        guard let data = flow.data, let state = try? JSONDecoder().decode(State.self, from: Data(data.utf8)) else { throw Self.gone }
        if flow.step != .started, state.linkAMR == nil, let signedIn = state.browserSessionID, browser?.session.id != signedIn {
            throw Self.gone
        }
        return (flow, state, try await services.clients.resolve(flow.clientID))
    }

    func user(of flow: FlowRecord) async throws -> UserRecord {
        guard let id = flow.userID, let user = try await services.persistence.read({ try await $0.users.find(id: id) }),
            user.state == .active
        else { throw Self.gone }
        return user
    }

    static func encode(_ state: State) throws -> String {
        String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
    }
}
