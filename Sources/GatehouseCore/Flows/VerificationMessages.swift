import Foundation
import GatehouseAPI

/// Writes verification codes, link tokens and their messages. Sending is the outbox dispatcher's job.
public struct VerificationMessages: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// What the verification code record keeps for the link flow.
    struct LinkData: Codable {
        var redirectTo: String?
        var pkce: PKCEChallenge?
    }

    /// A fresh code and link token for `user`, killing older ones, and the mail that carries them.
    public func issue(
        user: UserRecord, client: ClientRecord, redirectTo: String?, pkce: PKCEChallenge?, meta: RequestMeta,
        stores: any Stores
    ) async throws {
        guard let email = user.email else { return }
        let now = services.clock.now()
        let code = Secrets.numericCode(digits: 6)
        let token = Secrets.token(prefix: "gh_v_")
        let binding = "\(OneTimeCodeRecord.Purpose.verifyEmail.rawValue):\(client.id):\(email)"
        let data = String(decoding: try JSONEncoder().encode(LinkData(redirectTo: redirectTo, pkce: pkce)), as: UTF8.self)
        try await stores.codes.invalidate(purpose: .verifyEmail, identifier: email, clientID: client.id, at: now)
        // Code and link are separate records: they expire on different clocks (minutes vs a day).
        try await stores.codes.insert(
            OneTimeCodeRecord(
                purpose: .verifyEmail, identifier: email, clientID: client.id, userID: user.id,
                codeHash: services.secret.codeHash(code, binding: binding), tokenHash: nil,
                maxAttempts: services.settings.codeMaxAttempts, data: data, createdAt: now,
                expiresAt: now.addingTimeInterval(services.settings.codeTTL)))
        try await stores.codes.insert(
            OneTimeCodeRecord(
                purpose: .verifyEmail, identifier: email, clientID: client.id, userID: user.id, codeHash: nil,
                tokenHash: Secrets.sha256Hex(token), maxAttempts: 1, data: data, createdAt: now,
                expiresAt: now.addingTimeInterval(services.settings.verificationLinkTTL)))
        let link = services.settings.publicURL + "/verify?token=" + token
        try await enqueue(
            kind: "verification", to: email, locale: user.profile.locale ?? meta.acceptLanguage,
            variables: ["code": code, "link": link, "client_name": client.name], stores: stores)
    }

    /// Tells the owner of an address that someone tried to sign up with it.
    public func notifyExistingAccount(email: String, client: ClientRecord, meta: RequestMeta, stores: any Stores)
        async throws
    {
        try await enqueue(
            kind: "signup_notice", to: email, locale: meta.acceptLanguage,
            variables: ["client_name": client.name, "recovery_link": services.settings.publicURL + "/reset"],
            stores: stores)
    }

    func enqueue(kind: String, to recipient: String, locale: String?, variables: [String: String], stores: any Stores)
        async throws
    {
        let payload = try JSONEncoder().encode(variables)
        try await stores.outbox.enqueue(
            OutboxMessage(
                kind: kind, channel: .email, recipient: recipient, locale: locale.map { String($0.prefix(64)) },
                sealedPayload: try services.secret.seal(payload), createdAt: services.clock.now()))
    }
}
