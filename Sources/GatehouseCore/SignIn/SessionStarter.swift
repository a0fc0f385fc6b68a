import Foundation

/// The one place sessions start: app sessions, browser sessions and authorization codes, for every way
/// of signing in. The assurance gate sits here, so a sign-in that falls short of what the client and
/// the user require starts nothing, whichever path it came by.
public struct SessionStarter: Sendable {
    let issuer: SessionIssuer
    let browserSessions: BrowserSessions
    let clock: any WallClock
    let policy: any AssurancePolicy
    let flowLifetime: TimeInterval

    init(
        issuer: SessionIssuer, browserSessions: BrowserSessions, clock: any WallClock, policy: any AssurancePolicy,
        flowLifetime: TimeInterval
    ) {
        self.issuer = issuer
        self.browserSessions = browserSessions
        self.clock = clock
        self.policy = policy
        self.flowLifetime = flowLifetime
    }

    /// Starts `target` for `authentication` in the caller's transaction, or, when the sign-in falls
    /// short of the required level, records a flow that a second factor can complete and starts nothing.
    /// `passedGate`: the sign-in already passed this gate for this client when it became what the caller
    /// holds (an authorization code, which only the gate mints and which lives a minute); its exchange
    /// starts the session it deferred, as a session started a moment before a new requirement stays.
    /// `asked`: the level the request asked for (an OpenID client's `acr_values`).
    public func start(
        _ authentication: Authentication, client: ClientRecord, target: SessionTarget, meta: RequestMeta, stores: any Stores,
        passedGate: Bool = false, asked: AssuranceLevel = .firstFactor
    ) async throws -> SessionStart {
        let required =
            passedGate
            ? .firstFactor
            : try await policy.requirement(
                userID: authentication.userID, amr: authentication.amr, client: client, asked: asked, stores: stores)
        if authentication.level < required.level {
            return .factorRequired(
                try await awaitFactor(authentication, client: client, target: target, required: required, stores: stores))
        }
        switch target {
        case .app(let app):
            return .started(
                .app(
                    try await issuer.start(
                        userID: authentication.userID, client: client, amr: authentication.amr, scopes: app.scopes, meta: meta,
                        stores: stores, credentialID: authentication.credentialID, id: app.sessionID ?? UUID(),
                        browserSessionID: app.browserSessionID, authTime: authentication.authTime, claims: app.claims)))
        case .browser(let browser):
            let signedIn = try await browserSessions.signedIn(
                userID: authentication.userID, amr: authentication.amr, authTime: authentication.authTime, current: browser.current,
                meta: meta, stores: stores)
            return .started(.browser(signedIn.session, cookie: signedIn.cookieValue))
        case .authorizationCode(let code):
            return .started(
                .code(
                    try await AuthorizationCodes.mint(
                        authentication, client: client, target: code, now: clock.now(), stores: stores)))
        }
    }

    /// The sign-in waits in a flow: who, how far they got, and what to start once a factor completes it.
    private func awaitFactor(
        _ authentication: Authentication, client: ClientRecord, target: SessionTarget, required: AssuranceRequirement,
        stores: any Stores
    ) async throws -> PendingFactor {
        let pending = PendingSignIn(
            authentication: authentication, target: target, factors: required.factors, enrol: required.enrol ? true : nil)
        let id = try await InlineFlows.begin(
            .secondFactor, clientID: client.id, userID: authentication.userID,
            data: String(decoding: try JSONEncoder().encode(pending), as: UTF8.self), lifetime: min(flowLifetime, 10 * 60),
            now: clock.now(), stores: stores)
        return PendingFactor(id: id, factors: required.factors, enrol: required.enrol)
    }
}

/// A sign-in waiting for its second factor, as its flow keeps it.
struct PendingSignIn: Codable, Sendable {
    var authentication: Authentication
    var target: SessionTarget
    var factors: [String]
    /// The user enrols the factor in this flow; its first code completes the sign-in.
    var enrol: Bool?
}

extension FlowKind {
    /// A sign-in that passed its first factor and waits for a second before any session starts.
    public static let secondFactor = FlowKind(rawValue: "second_factor")
}
