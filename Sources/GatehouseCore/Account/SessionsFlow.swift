import Foundation
import GatehouseAPI

/// Logout and session management for the signed-in user.
public struct SessionsFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public func logout(_ principal: Principal, scope: LogoutScope, meta: RequestMeta = RequestMeta()) async throws {
        let now = services.clock.now()
        let sessionID = principal.session.id
        let userID = principal.user.id
        let event = HookEvent(
            point: .logout, clientID: principal.session.clientID, method: "logout_\(scope.rawValue)", userID: userID, meta: meta)
        try await services.persistence.transaction { stores in
            try await services.recordEvent(event, stores: stores)
            switch scope {
            case .local:
                _ = try await stores.endSession(sessionID, at: now, reason: .logout, notices: services.notices)
            case .others:
                _ = try await stores.endAllSessions(
                    of: userID, except: sessionID, at: now, reason: .logoutOthers, notices: services.notices)
            case .global:
                _ = try await stores.endAllSessions(of: userID, at: now, reason: .logoutGlobal, notices: services.notices)
            }
        }
        await services.hooks.after(event)
    }

    public func list(_ principal: Principal) async throws -> SessionList {
        let now = services.clock.now()
        let userID = principal.user.id
        let (sessions, devices) = try await services.persistence.read { stores in
            let sessions = try await stores.sessions.listLive(userID: userID, now: now)
            // Only users with device sessions pay for the second read.
            let devices =
                sessions.contains { $0.credentialID != nil && !$0.amr.contains(AuthenticationMethod.password) }
                ? try await stores.credentials.list(userID: userID, type: .deviceAuthenticator) : []
            return (sessions, devices)
        }
        var byID: [String: SessionAuthenticator] = [:]
        for credential in devices {
            guard let config = try? credential.decodeConfig(DeviceAuthenticatorStrategy.Config.self) else { continue }
            byID[credential.id] = SessionAuthenticator(
                id: credential.id, type: config.kind, deviceId: config.deviceID, deviceName: config.deviceName)
        }
        return SessionList(
            sessions: sessions.map {
                SessionInfo(
                    id: $0.id, clientId: $0.clientID, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt,
                    expiresAt: $0.expiresAt, amr: $0.amr, scopes: $0.scopes, userAgent: $0.userAgent,
                    current: $0.id == principal.session.id, authenticator: $0.credentialID.flatMap { byID[$0] })
            })
    }

    /// Revokes one of the caller's own sessions; another user's id is "not found", not "forbidden".
    public func revoke(_ principal: Principal, sessionID: UUID, meta: RequestMeta = RequestMeta()) async throws {
        let now = services.clock.now()
        let userID = principal.user.id
        let revoked = try await services.persistence.transaction { stores -> Bool in
            guard let session = try await stores.sessions.find(id: sessionID), session.userID == userID,
                session.isLive(at: now)
            else { return false }
            try await services.recordEvent(
                HookEvent(point: .logout, clientID: session.clientID, method: "session_revoke", userID: userID, meta: meta),
                stores: stores)
            return try await stores.endSession(sessionID, at: now, reason: .userRevoked, notices: services.notices)
        }
        guard revoked else { throw GatehouseError.notFound("No such session.") }
    }
}
