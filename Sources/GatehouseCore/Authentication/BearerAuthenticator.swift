import Foundation
import GatehouseAPI

/// Checks a user's access token and that its session is still live, so logout takes effect at once.
public struct BearerAuthenticator: Sendable {
    let tokens: AccessTokens
    let persistence: any Persistence
    let clock: any WallClock
    let clients: ClientResolver
    let dpop: DPoPVerifier

    public init(services: CoreServices) {
        self.tokens = services.tokens
        self.persistence = services.persistence
        self.clock = services.clock
        self.clients = services.clients
        self.dpop = services.dpop
    }

    /// The principal; nil when the token is valid but not a user's (a `client_credentials` token has no
    /// session), so another authenticator may claim it. A bad, expired or revoked token throws.
    public func authenticate(_ presented: PresentedToken) async throws -> Principal? {
        let claims = try await tokens.verify(presented.token)
        if claims.sid.isEmpty { return nil }
        try await dpop.check(claims, presented: presented)
        guard let sessionID = UUID(uuidString: claims.sid) else {
            throw GatehouseError.unauthorized("This token does not belong to a user session.")
        }
        // A user id, or a pairwise client's value of it (never a UUID): then the session names the
        // user, and the token must carry what that client (from the client cache) is shown for them.
        let userID = UUID(uuidString: claims.sub)
        let now = clock.now()
        let found = try await persistence.read { try await $0.sessions.findWithUser(id: sessionID) }
        let ended = GatehouseError.unauthorized("The session has ended.", code: .sessionRevoked)
        guard let (session, user) = found, session.isLive(at: now), userID == nil || session.userID == userID else { throw ended }
        if userID == nil {
            guard let client = try? await clients.resolve(session.clientID),
                tokens.subjects.subject(of: session.userID, for: client) == claims.sub
            else { throw ended }
        }
        guard user.state == .active else { throw GatehouseError.accountDisabled }
        return Principal(claims: claims, session: session, user: user)
    }
}
