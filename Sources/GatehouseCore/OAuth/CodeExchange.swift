import Foundation
import GatehouseAPI
import Logging

/// `grant_type=authorization_code`: a code minted by ``SessionStarter`` becomes the app session it
/// deferred. PKCE (RFC 7636) and the redirect URI are checked here; a replayed code ends its session.
public struct CodeExchange: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// `grant_type=authorization_code`.
    public func exchange(
        code: String, redirectURI: String?, verifier: String?, client: ClientRecord, meta: RequestMeta, resource: String? = nil
    ) async throws -> TokenResponse {
        let resources = try SessionIssuer.resources(requested: resource, client: client, issuer: services.tokens.issuer)
        // Before the code is spent: a refused exchange leaves it for the retry.
        try await services.rateLimits.consume(.token, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        let record: OneTimeCodeRecord
        do {
            record = try await services.codes.redeem(token: code, purpose: .authorizationCode, endsSiblings: false)
        } catch let error as GatehouseError where error.category != .unavailable {
            // Not a storage fault (which leaves the code for the retry): the code is spent or unknown.
            try await endSessionOfReplayedCode(code, client: client)
            throw GatehouseError.invalidGrant("The authorization code is not valid.")
        }
        guard record.clientID == client.id, let userID = record.userID,
            let grant = record.data.flatMap({ try? JSONDecoder().decode(AuthorizationCodes.Grant.self, from: Data($0.utf8)) })
        else { throw GatehouseError.invalidGrant("The authorization code was issued to another client.") }
        // RFC 6749 §4.1.3: the redirect URI the code was issued for must be presented again.
        guard redirectURI == grant.redirectURI else {
            throw GatehouseError.invalidGrant("redirect_uri does not match the one the code was issued for.")
        }
        if let pkce = grant.pkce {
            guard let verifier, pkce.verify(verifier: verifier) else {
                throw GatehouseError.invalidGrant("The code_verifier does not match the code_challenge.")
            }
        } else if client.kind == .public {
            // Without PKCE a public client's code is a bearer secret in a URL: refuse it.
            throw GatehouseError.invalidGrant("PKCE is required for public clients.")
        }
        let issuer = services.issuer
        let starter = services.starter
        let scopes = grant.hosted?.scopes ?? SessionIssuer.grant(requested: nil, client: client)
        let authentication = Authentication(
            userID: userID, amr: grant.amr, isNew: grant.isNew ?? false, credentialID: grant.credentialID, authTime: grant.hosted?.authTime)
        let target = SessionTarget.app(
            .init(
                scopes: scopes, nonce: grant.hosted?.nonce, sessionID: AuthorizationCodes.sessionID(of: code),
                browserSessionID: grant.hosted?.browserSessionID, claims: grant.hosted?.claims))
        let (start, user) = try await services.persistence.transaction { stores -> (SessionStart, UserRecord) in
            guard let user = try await stores.users.find(id: userID), user.state == .active else {
                throw GatehouseError.invalidGrant("The account is not available.")
            }
            if grant.acceptTerms == true {
                try await TermsAcceptance.record(userID: user.id, client: client, at: services.clock.now(), stores: stores)
            }
            // The code was minted through the gate for this client: its exchange does not ask again.
            return (
                try await starter.start(authentication, client: client, target: target, meta: meta, stores: stores, passedGate: true), user
            )
        }
        let started = try start.get().app()
        // The user comes with what the app must still ask for (terms, required fields), as on every
        // other sign-in's answer.
        return try await issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: client, user: user, isNew: grant.isNew,
            nonce: grant.hosted?.nonce, resources: resources, acr: grant.hosted?.acr)
    }

    /// A used code of this client presented again: its session ends (no-op for a code never issued).
    private func endSessionOfReplayedCode(_ code: String, client: ClientRecord) async throws {
        guard code.utf8.count <= 256 else { return }
        let hash = Secrets.sha256Hex(code)
        let now = services.clock.now()
        let ended = try await services.persistence.transaction { stores -> Bool in
            guard let record = try await stores.codes.find(tokenHash: hash), record.purpose == .authorizationCode,
                record.consumedAt != nil, record.clientID == client.id
            else { return false }
            return try await stores.endSession(
                AuthorizationCodes.sessionID(of: code), at: now, reason: .codeReplayed, notices: services.notices)
        }
        if ended {
            services.logger.warning("authorization code replayed: its session was ended", metadata: ["client_id": .string(client.id)])
        }
    }
}
