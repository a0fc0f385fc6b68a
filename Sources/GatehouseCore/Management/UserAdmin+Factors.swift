import Foundation
import GatehouseAPI

// An operator's view of a user's second factors: what is enrolled (never a secret), and a reset for a
// user who lost their authenticator app and their recovery codes.
extension UserAdmin {
    /// The user's authenticator apps and how many recovery codes are left.
    public func factors(id: UUID) async throws -> FactorList {
        let credentials = try await persistence.read { stores -> [CredentialRecord] in
            guard try await stores.users.find(id: id) != nil else { throw Self.noSuchUser }
            return try await stores.credentials.list(userID: id, type: nil)
        }
        return FactorsFlow.factorList(credentials)
    }

    /// Removes every authenticator app and recovery code of the user, so they can sign in with their
    /// first factor and enrol again (a client with `mfa=required` leads them there). Their sessions
    /// end too: one of them may be the thief's who made the reset necessary. Returns the factors removed.
    public func resetFactors(id: UUID, actor: AdminActor) async throws -> Int {
        let now = clock.now()
        let services = services
        let notices = notices
        return try await persistence.transaction { stores in
            guard try await stores.users.find(id: id) != nil else { throw Self.noSuchUser }
            let apps = try await stores.credentials.deleteAll(userID: id, type: .totp)
            let codes = try await stores.credentials.deleteAll(userID: id, type: .recoveryCode)
            let ended = try await stores.endAllSessions(of: id, at: now, reason: .adminRevoked, notices: notices)
            try await stores.audit.append(
                actor.event("mfa.reset", at: now, userID: id, reason: "\(apps) apps, \(codes) recovery codes, \(ended) sessions"))
            // The running server also tells subscribed webhooks; the CLI has no outbox subscriptions.
            if apps > 0, let services {
                try await services.recordEvent(
                    HookEvent(point: .factorRemoval, clientID: "admin", method: "totp", userID: id, meta: actor.meta), stores: stores)
            }
            return apps
        }
    }

    /// Removes one of the user's passkeys (a lost or suspect one) and ends the sessions it started;
    /// refused while it is the user's last way to sign in. Audited as `admin.passkey.removed`.
    public func removePasskey(id: UUID, passkeyID: String, actor: AdminActor) async throws {
        let now = clock.now()
        let services = services
        let notices = notices
        try await persistence.transaction { stores in
            guard try await stores.users.find(id: id) != nil else { throw Self.noSuchUser }
            try await PasskeysFlow.delete(passkeyID, userID: id, at: now, stores: stores, notices: notices)
            try await stores.audit.append(actor.event("passkey.removed", at: now, userID: id, reason: passkeyID))
            if let services {
                try await services.recordEvent(
                    HookEvent(point: .factorRemoval, clientID: "admin", method: "passkey", userID: id, meta: actor.meta), stores: stores)
            }
        }
    }
}
