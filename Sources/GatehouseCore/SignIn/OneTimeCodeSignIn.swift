import Foundation
import GatehouseAPI

/// A one-time code sent to an email address or a phone number, as a sign-in the runner runs: counted
/// per address block, the code redeemed once, and the account found or, for an unknown identifier
/// whose code allowed it, created already proved.
struct OneTimeCodeSignIn: SignInStrategy {
    let services: CoreServices

    struct Submission: Sendable {
        var email: String?
        var phone: String?
        var code: String
    }

    struct Admitted: Sendable {
        var identifier: Identifier
        /// The account, looked up only for the before-hook.
        var known: UserRecord?
    }

    struct Proof: Sendable {
        var identifier: Identifier
        var createUser: Bool
    }

    func admit(_ submission: Submission, client: ClientRecord, meta: RequestMeta, hooked: Bool) async throws -> Admitted {
        let identifier = try Identifier.parse(email: submission.email, phone: submission.phone)
        try Self.requireEnabled(identifier, client: client, smsAvailable: services.settings.smsAvailable)
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        let known = hooked ? try await services.persistence.read { try await identifier.findUser(in: $0) } : nil
        return Admitted(identifier: identifier, known: known)
    }

    func beforeHook(_ admitted: Admitted) -> SignInHook {
        SignInHook(
            point: .login, method: admitted.identifier.method, identifier: admitted.identifier.value, userID: admitted.known?.id)
    }

    func prove(_ submission: Submission, admitted: Admitted, client: ClientRecord, meta: RequestMeta) async throws -> Proof {
        let identifier = admitted.identifier
        let codes = services.codes
        let record = try await services.auditingCodeCheck(
            method: "\(identifier.channel.rawValue)_login", identifier: identifier.value, clientID: client.id, meta: meta
        ) { try await codes.redeem(code: submission.code, purpose: .login, identifier: identifier.value, clientID: client.id) }
        let data = record.data.flatMap { try? JSONDecoder().decode(CodeData.self, from: Data($0.utf8)) }
        return Proof(identifier: identifier, createUser: data?.createUser ?? true)
    }

    func account(
        for proof: Proof, changes: HookChanges, client: ClientRecord, now: Date, stores: any Stores
    ) async throws -> AccountMatch {
        let identifier = proof.identifier
        var isNew = false
        var found = try await identifier.findUser(in: stores)
        if found == nil {
            guard proof.createUser else { throw OneTimeCodes.expired }
            var fresh = UserRecord(email: nil, createdAt: now)
            switch identifier {
            case .email(let email):
                fresh.email = email
                fresh.emailVerified = true
            case .phone(let phone):
                fresh.phone = phone
                fresh.phoneVerified = true
            }
            do {
                try await stores.users.insert(fresh)
                found = fresh
                isNew = true
            } catch StoreError.conflict {
                // Created a moment ago by another request (a password sign-up): sign that one in.
                found = try await identifier.findUser(in: stores)
            }
        }
        guard var user = found, user.state == .active else { throw GatehouseError.accountDisabled }
        // The code proves the identifier. If the account had never proved it, whoever created it may
        // not own it: their password and sessions go, so a squatted address cannot be taken over.
        var proved = false
        var firstProof = false
        switch identifier {
        case .email where !user.emailVerified:
            user.emailVerified = true
            proved = true
            firstProof = true
        case .phone where !user.phoneVerified:
            user.phoneVerified = true
            proved = true
            firstProof = user.email == nil || !user.emailVerified
        default: break
        }
        if proved {
            if firstProof && !isNew {
                try await services.password.firstProof(of: user.id, at: now, stores: stores, notices: services.notices)
                user.hasPassword = false
            }
            user.updatedAt = now
            try await stores.users.update(user)
        }
        return AccountMatch(
            user: user, amr: identifier.channel == .sms ? [AuthenticationMethod.sms] : [AuthenticationMethod.oneTimeCode], isNew: isNew,
            provesIdentifier: true, point: isNew ? .signup : .login, method: identifier.method, identifier: identifier.value)
    }

    /// What a sent code carries to its sign-in: whether it may create the account.
    struct CodeData: Codable {
        var createUser: Bool
    }

    /// The client offers the identifier's method, and a text message has a gateway to go by.
    static func requireEnabled(_ identifier: Identifier, client: ClientRecord, smsAvailable: Bool) throws {
        guard client.settings.methods.contains(identifier.method) else {
            throw GatehouseError.methodNotEnabled("This client does not offer \(identifier.method).")
        }
        if case .phone = identifier, !smsAvailable {
            throw GatehouseError.methodNotEnabled("This server has no SMS gateway configured.")
        }
    }
}
