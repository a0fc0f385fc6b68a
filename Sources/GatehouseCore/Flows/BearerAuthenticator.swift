import Foundation

/// Who is calling, once the bearer token has been checked.
public struct Principal: Sendable {
    public var claims: AccessTokenClaims
    public var session: SessionRecord
    public var user: UserRecord
}

/// Checks an access token and that its session is still live, so logout takes effect at once.
public struct BearerAuthenticator: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public func authenticate(_ token: String) async throws -> Principal {
        let claims = try await services.tokens.verify(token)
        guard let sessionID = UUID(uuidString: claims.sid), let userID = UUID(uuidString: claims.sub) else {
            throw GatehouseError.unauthorized("This token does not belong to a user session.")
        }
        let now = services.clock.now()
        let found = try await services.persistence.read { stores -> (SessionRecord, UserRecord)? in
            guard let session = try await stores.sessions.find(id: sessionID), session.isLive(at: now),
                session.userID == userID, let user = try await stores.users.find(id: userID)
            else { return nil }
            return (session, user)
        }
        guard let (session, user) = found else {
            throw GatehouseError.unauthorized("The session has ended.", code: .sessionRevoked)
        }
        guard user.state == .active else { throw GatehouseError.accountDisabled }
        return Principal(claims: claims, session: session, user: user)
    }
}
