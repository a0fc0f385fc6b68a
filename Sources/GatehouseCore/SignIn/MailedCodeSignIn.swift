import Foundation
import GatehouseAPI

/// A code or link mailed to prove an address, as a sign-in the runner runs: the verification mail's
/// (`verifyEmail`: the address is proved, and an account that had to verify first meets its app for
/// the first time) and the recovery mail's (`recovery`: a short session whose `amr` holds `recovery`,
/// so the password can be set without the old one).
struct MailedCodeSignIn: SignInStrategy {
    let services: CoreServices
    let purpose: OneTimeCodeRecord.Purpose

    enum Submission: Sendable {
        /// The code from the mail, typed into the app.
        case code(email: String, code: String)
        /// The link's token; its record was looked up (not used) to find its client.
        case token(String, record: OneTimeCodeRecord)
    }

    struct Admitted: Sendable {
        var email: String?
        var userID: UUID?
        var method: String
    }

    struct Used: Sendable {
        var record: OneTimeCodeRecord
        var method: String
    }

    var point: HookPoint { purpose == .recovery ? .recovery : .verification }

    func admit(_ submission: Submission, client: ClientRecord, meta: RequestMeta, hooked: Bool) async throws -> Admitted {
        switch submission {
        case .code(let raw, _):
            let email = EmailAddress.normalize(raw)
            try await services.rateLimits.consume(
                .codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
            // The hook learns whose account it is when there is one; the lookup is skipped without hooks.
            let known = hooked ? try await services.persistence.read { try await $0.users.find(email: email) } : nil
            return Admitted(email: email, userID: known?.id, method: "email_code")
        case .token(_, let record):
            // A link's token is a 256-bit secret: nothing to count.
            return Admitted(email: record.identifier, userID: record.userID, method: "email_link")
        }
    }

    func beforeHook(_ admitted: Admitted) -> SignInHook {
        SignInHook(point: point, method: admitted.method, identifier: admitted.email, userID: admitted.userID)
    }

    func prove(_ submission: Submission, admitted: Admitted, client: ClientRecord, meta: RequestMeta) async throws -> Used {
        let codes = services.codes
        switch submission {
        case .code(_, let code):
            let email = admitted.email ?? ""
            let record = try await services.auditingCodeCheck(
                method: purpose == .recovery ? "email_recovery" : "email_verification", identifier: email, clientID: client.id, meta: meta
            ) { try await codes.redeem(code: code, purpose: purpose, identifier: email, clientID: client.id) }
            return Used(record: record, method: admitted.method)
        case .token(let token, _):
            let record = try await codes.redeem(token: token, purpose: purpose)
            guard record.clientID == client.id else { throw OneTimeCodes.expired }
            return Used(record: record, method: admitted.method)
        }
    }

    func account(
        for used: Used, changes: HookChanges, client: ClientRecord, now: Date, stores: any Stores
    ) async throws -> AccountMatch {
        let (record, method) = (used.record, used.method)
        switch purpose {
        case .recovery:
            guard let userID = record.userID, var user = try await stores.users.find(id: userID), user.state == .active else {
                throw OneTimeCodes.expired
            }
            // Receiving the code proves the address. If it was never proved before, the password was set by
            // whoever created the account, who may not own the address: it goes, as do their sessions.
            if !user.emailVerified {
                user.emailVerified = true
                user.updatedAt = now
                user.hasPassword = false
                try await stores.users.update(user)
                try await services.password.firstProof(of: user.id, at: now, stores: stores, notices: services.notices)
            }
            return AccountMatch(
                user: user, amr: [AuthenticationMethod.recovery], provesIdentifier: true, point: .recovery, method: method,
                identifier: user.email, standsAlone: true)
        default:
            let proved = try await Self.proveAddress(record, now: now, stores: stores)
            return AccountMatch(
                user: proved.user, amr: [AuthenticationMethod.oneTimeCode], isNew: proved.firstSignIn, provesIdentifier: true,
                point: .verification, method: method, identifier: proved.user.email, standsAlone: proved.newlyProved)
        }
    }

    /// Marks the address of a used verification code proved. `firstSignIn`: an account that had to
    /// verify its address before signing in meets its app here for the first time (`is_new`).
    static func proveAddress(
        _ record: OneTimeCodeRecord, now: Date, stores: any Stores
    ) async throws -> (user: UserRecord, firstSignIn: Bool, newlyProved: Bool) {
        guard let userID = record.userID, var user = try await stores.users.find(id: userID), user.email == record.identifier else {
            throw OneTimeCodes.expired
        }
        guard user.state == .active else { throw GatehouseError.accountDisabled }
        let firstSignIn = !user.emailVerified && user.lastLoginAt == nil
        guard !user.emailVerified else { return (user, firstSignIn, false) }
        user.emailVerified = true
        user.updatedAt = now
        try await stores.users.update(user)
        return (user, firstSignIn, true)
    }
}
