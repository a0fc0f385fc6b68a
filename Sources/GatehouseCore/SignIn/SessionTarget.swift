import Foundation

/// What a sign-in starts: the three kinds of session Gatehouse has. Codable because a sign-in that
/// waits for a second factor keeps its target in a persisted flow until the factor completes it.
public enum SessionTarget: Sendable, Codable {
    /// An app session with its first refresh token.
    case app(App)
    /// A browser signed in to the hosted pages (single sign-on).
    case browser(Browser)
    /// An authorization code the client exchanges for an app session.
    case authorizationCode(Code)

    public struct App: Sendable, Codable {
        public var scopes: [String]
        /// The nonce the ID token carries.
        public var nonce: String?
        /// A session id derived from the code that starts it, so a replayed code can end it.
        public var sessionID: UUID?
        /// The browser session behind a hosted sign-in, so RP logout ends this session with it.
        public var browserSessionID: UUID?
        /// Single claims the authorization request asked for, kept with the session.
        public var claims: RequestedClaims?

        public init(
            scopes: [String], nonce: String? = nil, sessionID: UUID? = nil, browserSessionID: UUID? = nil, claims: RequestedClaims? = nil
        ) {
            self.scopes = scopes
            self.nonce = nonce
            self.sessionID = sessionID
            self.browserSessionID = browserSessionID
            self.claims = claims
        }
    }

    public struct Browser: Sendable, Codable {
        /// The browser's session when it has one: the same user's is renewed in place, another
        /// user's is ended.
        public var current: BrowserSessionRecord?
        /// The hosted authorization the sign-in happened in, to go on with once the session exists.
        public var authorizeFlowID: UUID?

        public init(current: BrowserSessionRecord? = nil, authorizeFlowID: UUID? = nil) {
            self.current = current
            self.authorizeFlowID = authorizeFlowID
        }
    }

    public struct Code: Sendable, Codable {
        public var redirectURI: String
        public var pkce: PKCEChallenge?
        /// Terms accepted with the sign-in: recorded when the code is redeemed.
        public var acceptTerms: Bool
        /// What a hosted authorization decided (scopes, nonce, browser session, acr).
        public var hosted: HostedGrant?

        public init(redirectURI: String, pkce: PKCEChallenge?, acceptTerms: Bool = false, hosted: HostedGrant? = nil) {
            self.redirectURI = redirectURI
            self.pkce = pkce
            self.acceptTerms = acceptTerms
            self.hosted = hosted
        }
    }
}

/// A session that started.
public enum StartedSession: Sendable {
    case app(SessionIssuer.Started)
    /// The browser's session; `cookie` is nil when the browser keeps the cookie it has.
    case browser(BrowserSessionRecord, cookie: String?)
    case code(String)

    /// The app session; a caller that asked for another target has a bug.
    public func app() throws -> SessionIssuer.Started {
        guard case .app(let started) = self else { throw GatehouseError.internalFailure() }
        return started
    }

    public func browser() throws -> (session: BrowserSessionRecord, cookie: String?) {
        guard case .browser(let session, let cookie) = self else { throw GatehouseError.internalFailure() }
        return (session, cookie)
    }

    public func code() throws -> String {
        guard case .code(let code) = self else { throw GatehouseError.internalFailure() }
        return code
    }
}

/// What ``SessionStarter`` did with a sign-in: started its session, or kept it waiting for a second
/// factor. Returned rather than thrown so the caller's transaction commits what the first factor did
/// (a created account, a spent code) together with the waiting flow.
public enum SessionStart: Sendable {
    case started(StartedSession)
    case factorRequired(PendingFactor)

    public var isStarted: Bool {
        if case .started = self { return true }
        return false
    }

    /// The session, or ``GatehouseError/mfaRequired(_:)`` naming the flow that completes it.
    public func get() throws -> StartedSession {
        switch self {
        case .started(let started): return started
        case .factorRequired(let pending): throw GatehouseError.mfaRequired(pending)
        }
    }
}
