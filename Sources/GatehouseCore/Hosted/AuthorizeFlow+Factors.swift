import Foundation
import GatehouseAPI

extension FlowStep {
    /// Hosted sign-in: a factor enrolled in this sign-in was the user's first; its recovery codes are
    /// shown once before the flow goes on.
    public static let recoveryCodes = FlowStep(rawValue: "recovery_codes")
}

// The hosted sign-in's second factor: the factor page (asking for a factor, or enrolling the user's
// first), the recovery codes shown once after an enrolment, and the step-up of a browser session that
// proved less than the request requires.
extension AuthorizeFlow {
    func awaitFactor(_ flow: FlowRecord, _ state: State, _ pending: PendingFactor) async throws -> Outcome {
        var next = state
        next.pendingFactor = pending.id
        next.factors = pending.factors
        next.enrol = pending.enrol ? true : nil
        _ = try await FlowRunner(services: services).advance(flow, to: .secondFactor, data: try Self.encode(next))
        return .show(flow.id)
    }

    /// A provider's sign-in, started from the sign-in page, needs a second factor: the flow waits on its
    /// factor page.
    public func federatedAwaitsFactor(_ id: UUID, binding: String, pending: PendingFactor) async throws -> Outcome {
        let (flow, state, _) = try await load(id, binding: binding, step: .started)
        return try await awaitFactor(flow, state, pending)
    }

    /// The factor page's form: completes the waiting sign-in, which signs the browser in, and the flow
    /// goes on.
    public func completeFactor(
        _ id: UUID, binding: String, factor: String, response: String, meta: RequestMeta
    ) async throws
        -> (Outcome, cookie: String?)
    {
        let (flow, state, _) = try await load(id, binding: binding, step: .secondFactor)
        guard let pending = state.pendingFactor else { throw Self.gone }
        let completed = try await SecondFactorFlow(services: services).complete(
            flowID: pending, factor: factor, response: response, meta: meta)
        // Started for this flow's browser, or a bug: never hand another flow's session over.
        guard case .browser(let target) = completed.target, target.authorizeFlowID == flow.id else {
            throw GatehouseError.internalFailure()
        }
        var next = state
        next.pendingFactor = nil
        guard let codes = completed.recoveryCodes else { return try await authenticated(flow, next) { completed.signedIn } }
        // The browser is signed in now; the new recovery codes wait on their own page, sealed like mail,
        // until the user says they are kept, then the flow goes on and forgets them.
        let browser = try completed.signedIn.started.browser()
        authenticate(&next, with: browser.session, fresh: true)
        next.enrol = nil
        next.sealedRecoveryCodes = try services.secret.seal(try JSONEncoder().encode(codes))
        _ = try await FlowRunner(services: services).advance(
            flow, to: .recoveryCodes, userID: completed.signedIn.user.id, data: try Self.encode(next))
        return (.show(flow.id), browser.cookie)
    }

    /// The factor page's "send me a code" form: a code by mail or text for the waiting sign-in.
    public func sendFactorCode(_ id: UUID, binding: String, factor: String, meta: RequestMeta) async throws -> OTPSentResponse {
        let (_, state, _) = try await load(id, binding: binding, step: .secondFactor)
        guard let pending = state.pendingFactor else { throw Self.gone }
        return try await SecondFactorFlow(services: services).sendCode(flowID: pending, factor: factor, meta: meta)
    }

    /// The recovery codes page's form: the codes are forgotten and the flow goes on.
    public func recoveryCodesKept(_ id: UUID, binding: String, browser: BrowserPrincipal?) async throws -> Outcome {
        let (flow, state, _) = try await load(id, binding: binding, step: .recoveryCodes, browser: browser)
        guard let browser, browser.session.id == state.browserSessionID else { throw Self.gone }
        var next = state
        next.sealedRecoveryCodes = nil
        return try await advance(flow, next, user: browser.user, session: browser.session)
    }

    /// What the factor page shows besides its form: the authenticator app being enrolled (its secret and
    /// URI), or, after an enrolment, the recovery codes.
    func factorPageContent(_ flow: FlowRecord, _ state: State) async throws -> (TOTPEnrolment?, [String]) {
        if flow.step == .recoveryCodes, let sealed = state.sealedRecoveryCodes {
            return (nil, try JSONDecoder().decode([String].self, from: try services.secret.open(sealed)))
        }
        guard flow.step == .secondFactor, state.enrol == true, let pending = state.pendingFactor else { return (nil, []) }
        return (try await SecondFactorFlow(services: services).enrol(flowID: pending), [])
    }

    /// A browser session stood in for signing in, but proved less than the client or the user now
    /// requires: what it proved is the first factor of a sign-in that waits for its second (through the
    /// same gate), and the flow waits on its factor page; completing it renews this browser's session.
    func stepUp(
        _ flow: FlowRecord, _ state: State, user: UserRecord, session: BrowserSessionRecord, factors: [String], client: ClientRecord
    ) async throws -> Outcome {
        // The factor is a sign-in now: completing it renews the session in place with `mfa` and a new
        // `auth_time`.
        let authentication = Authentication(userID: user.id, amr: session.amr)
        let target = SessionTarget.browser(.init(current: session, authorizeFlowID: flow.id))
        let starter = services.starter
        let asked = state.request.askedLevel
        let start = try await services.persistence.transaction { stores in
            try await starter.start(authentication, client: client, target: target, meta: RequestMeta(), stores: stores, asked: asked)
        }
        guard case .factorRequired(var pending) = start else {
            // Met meanwhile (the requirement was lifted): the browser's session was renewed; go on.
            return try await advance(flow, state, user: user)
        }
        // Not signed in at the required level until the factor is in: the factor page is the sign-in's.
        var waiting = state
        waiting.browserSessionID = nil
        waiting.amr = nil
        waiting.authTime = nil
        waiting.fresh = nil
        if pending.factors.isEmpty { pending.factors = factors }
        return try await awaitFactor(flow, waiting, pending)
    }

    /// The `acr` of an ID token: `2` when a second factor was part of the sign-in (whether now or in
    /// the browser session standing in; `auth_time` says when), else `1` for a sign-in in this flow and
    /// `0` for a browser session standing in.
    static func acr(amr: [String], fresh: Bool) -> String {
        let level = AssuranceLevel(amr: amr)
        return level >= .multiFactor ? level.description : fresh ? "1" : "0"
    }

    /// What `finish` found: the sign-in standing in falls short of the required level.
    struct ShortOfRequirement: Error {
        var factors: [String]
    }
}
