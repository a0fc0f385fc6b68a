import Foundation
import GatehouseAPI

/// Writes verification codes, link tokens and the messages that carry them. Sending is the outbox
/// dispatcher's job; these rows are written in the caller's transaction.
public struct VerificationMessages: Sendable {
    /// The resend cool-down of a verification mail, claimed by the sign-up that sends the first one
    /// and by every resend.
    static func cooldownKey(clientID: String, email: String) -> String { "verify:\(clientID):\(email)" }

    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// What a verification link keeps for the deep-link flow.
    struct LinkData: Codable {
        var redirectTo: String?
        var pkce: PKCEChallenge?
    }

    /// A fresh code and link for `user`, killing older ones, and the mail that carries them.
    public func issue(
        user: UserRecord, client: ClientRecord, redirectTo: String?, pkce: PKCEChallenge?, meta: RequestMeta,
        stores: any Stores
    ) async throws {
        guard let email = user.email else { return }
        let data = String(decoding: try JSONEncoder().encode(LinkData(redirectTo: redirectTo, pkce: pkce)), as: UTF8.self)
        let issued = try await services.codes.issue(
            purpose: .verifyEmail, identifier: email, client: client, userID: user.id,
            linkTTL: services.settings.verificationLinkTTL, data: data, stores: stores)
        let link = services.settings.publicURL + "/verify?token=" + (issued.token ?? "")
        try await enqueue(
            kind: "verification", to: email, locale: user.profile.locale ?? meta.acceptLanguage,
            variables: ["code": issued.code, "link": link, "client_name": client.name, "minutes": minutes(services.settings.codeTTL)],
            stores: stores)
        try await services.recordCodeSent(
            purpose: "verification", identifier: email, channel: .email, userID: user.id, clientID: client.id, meta: meta, stores: stores)
    }

    /// Tells the owner of an address that someone tried to sign up with it.
    public func notifyExistingAccount(
        email: String, client: ClientRecord, meta: RequestMeta, stores: any Stores
    )
        async throws
    {
        try await enqueue(
            kind: "signup_notice", to: email, locale: meta.acceptLanguage,
            variables: ["client_name": client.name, "recovery_link": services.settings.publicURL + "/reset"],
            stores: stores)
    }

    func enqueue(
        kind: String, to recipient: String, locale: String?, variables: [String: String], stores: any Stores
    )
        async throws
    {
        let payload = try JSONEncoder().encode(variables)
        try await stores.outbox.enqueue(
            OutboxMessage(
                kind: kind, channel: .email, recipient: recipient, locale: locale.map { String($0.prefix(64)) },
                sealedPayload: try services.secret.seal(payload), createdAt: services.clock.now()))
    }

    func minutes(_ interval: TimeInterval) -> String { String(Int((interval / 60).rounded(.up))) }
}
