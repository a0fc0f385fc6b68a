import Crypto
import Foundation
import GatehouseAPI
import Logging

/// Authorization codes (RFC 6749 §4.1) for the deep link back into the app: single use, one minute,
/// bound to client and redirect URI, with PKCE (RFC 7636) checked at the exchange.
public struct AuthorizationCodes: Sendable {
    let services: CoreServices
    public static let lifetime: TimeInterval = 60

    public init(services: CoreServices) { self.services = services }

    struct Grant: Codable {
        var redirectURI: String
        var pkce: PKCEChallenge?
        var amr: [String]
        /// Whether the sign-in behind the code created the account (social web sign-in); the token
        /// response carries it.
        var isNew: Bool?
        /// The credential the sign-in used, so its sessions end with it (an unlinked identity).
        var credentialID: String?
        /// The app asked to accept the client's terms; recorded when the app redeems the code, so a
        /// crafted link that never reaches the app accepts nothing.
        var acceptTerms: Bool?
        /// What the hosted sign-in (`/oauth/authorize`) adds.
        var hosted: HostedGrant?
    }

    /// What an authorization request through the hosted pages decided: the scopes, its nonce, and the
    /// browser session behind the sign-in (its `auth_time`, whether the user authenticated now).
    public struct HostedGrant: Codable, Sendable {
        public var scopes: [String]
        public var nonce: String?
        public var authTime: Date
        public var acr: String
        public var browserSessionID: UUID
        /// Single claims the request asked for (`claims` parameter).
        public var claims: RequestedClaims?

        public init(
            scopes: [String], nonce: String?, authTime: Date, acr: String, browserSessionID: UUID, claims: RequestedClaims? = nil
        ) {
            self.scopes = scopes
            self.nonce = nonce
            self.authTime = authTime
            self.acr = acr
            self.browserSessionID = browserSessionID
            self.claims = claims
        }
    }

    /// Writes a code for `authentication`, in the caller's transaction. Only ``SessionStarter`` calls
    /// it: a code is a session deferred, and passes the same gate.
    static func mint(
        _ authentication: Authentication, client: ClientRecord, target: SessionTarget.Code, now: Date, stores: any Stores
    ) async throws -> String {
        let code = Secrets.token(prefix: "gh_ac_")
        let grant = Grant(
            redirectURI: target.redirectURI, pkce: target.pkce, amr: authentication.amr, isNew: authentication.isNew,
            credentialID: authentication.credentialID, acceptTerms: target.acceptTerms ? true : nil, hosted: target.hosted)
        let data = String(decoding: try JSONEncoder().encode(grant), as: UTF8.self)
        let userID = authentication.userID
        try await stores.codes.insert(
            OneTimeCodeRecord(
                purpose: .authorizationCode, identifier: userID.uuidString.lowercased(), clientID: client.id,
                userID: userID, codeHash: nil, tokenHash: Secrets.sha256Hex(code), maxAttempts: 1, data: data,
                createdAt: now, expiresAt: now.addingTimeInterval(Self.lifetime)))
        return code
    }

    /// `grant_type=authorization_code`.
    public func exchange(
        code: String, redirectURI: String?, verifier: String?, client: ClientRecord, meta: RequestMeta, resource: String? = nil
    ) async throws -> TokenResponse {
        let resources = try SessionIssuer.resources(requested: resource, client: client, issuer: services.tokens.issuer)
        // Before the code is spent: a refused exchange leaves it for the retry.
        try await services.rateLimits.consume(.token, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        let record: OneTimeCodeRecord
        do {
            record = try await OneTimeCodes(services: services).redeem(token: code, purpose: .authorizationCode, endsSiblings: false)
        } catch is GatehouseError {
            try await endSessionOfReplayedCode(code, client: client)
            throw GatehouseError.invalidGrant("The authorization code is not valid.")
        }
        guard record.clientID == client.id, let userID = record.userID,
            let grant = record.data.flatMap({ try? JSONDecoder().decode(Grant.self, from: Data($0.utf8)) })
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
                scopes: scopes, nonce: grant.hosted?.nonce, sessionID: Self.sessionID(of: code),
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

    /// The session a code starts has an id derived from the code, so a second use of the code finds it
    /// and ends it: whoever replays a code may have seen the tokens the first use got (RFC 6749 §4.1.2).
    static func sessionID(of code: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(("gatehouse.code-session:" + code).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: custom
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
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
            return try await stores.endSession(Self.sessionID(of: code), at: now, reason: .codeReplayed, notices: services.notices)
        }
        if ended {
            services.logger.warning("authorization code replayed: its session was ended", metadata: ["client_id": .string(client.id)])
        }
    }

    /// `redirect` with `code` added to its query, whatever the scheme (app schemes included).
    static func append(code: String, to redirect: String) throws -> URL {
        try append([("code", code)], to: redirect)
    }

    /// `redirect` with `fields` added to its query, form-encoded by hand: URLComponents leaves `+` as
    /// it is, which a form decoder reads as a space (an app's `state` must come back exactly).
    public static func append(_ fields: [(String, String)], to redirect: String) throws -> URL {
        guard var components = URLComponents(string: redirect) else { throw GatehouseError.badRequest("Invalid redirect.") }
        // Nothing to add (a logout without `state`) leaves the URI as registered, without a bare `?`.
        if !fields.isEmpty {
            components.percentEncodedQuery = ([components.percentEncodedQuery].compactMap { $0 } + [FormEncoding.encode(fields)])
                .joined(separator: "&")
        }
        guard let url = components.url else { throw GatehouseError.badRequest("Invalid redirect.") }
        return url
    }
}

extension OneTimeCodeRecord.Purpose {
    public static let authorizationCode = OneTimeCodeRecord.Purpose(rawValue: "authorization_code")
}
