import Foundation
import GatehouseAPI

/// Checks a user's access token and that its session is still live, so logout takes effect at once.
public struct BearerAuthenticator: Sendable {
    let tokens: AccessTokens
    let persistence: any Persistence
    let clock: any WallClock

    public init(services: CoreServices) {
        self.tokens = services.tokens
        self.persistence = services.persistence
        self.clock = services.clock
    }

    /// The principal; nil when the token is valid but not a user's (a `client_credentials` token has no
    /// session), so another authenticator may claim it. A bad, expired or revoked token throws.
    public func authenticate(_ token: String) async throws -> Principal? {
        let claims = try await tokens.verify(token)
        if claims.sid.isEmpty { return nil }
        guard let sessionID = UUID(uuidString: claims.sid) else {
            throw GatehouseError.unauthorized("This token does not belong to a user session.")
        }
        // A user id, or a pairwise client's value of it (never a UUID): then the session names the
        // user, and the token must carry what that client is shown for them.
        let userID = UUID(uuidString: claims.sub)
        let subjects = tokens.subjects
        let now = clock.now()
        let found = try await persistence.read { stores -> (SessionRecord, UserRecord)? in
            guard let session = try await stores.sessions.find(id: sessionID), session.isLive(at: now) else { return nil }
            if let userID {
                guard session.userID == userID else { return nil }
            } else {
                guard let client = try await stores.clients.find(id: session.clientID),
                    subjects.subject(of: session.userID, for: client) == claims.sub
                else { return nil }
            }
            guard let user = try await stores.users.find(id: session.userID) else { return nil }
            return (session, user)
        }
        guard let (session, user) = found else {
            throw GatehouseError.unauthorized("The session has ended.", code: .sessionRevoked)
        }
        guard user.state == .active else { throw GatehouseError.accountDisabled }
        return Principal(claims: claims, session: session, user: user)
    }
}
