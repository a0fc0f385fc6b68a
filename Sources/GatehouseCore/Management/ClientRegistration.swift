import Foundation

extension OneTimeCodeRecord.Purpose {
    /// A one-use initial access token for dynamic client registration (RFC 7591 §3).
    public static let initialAccessToken = OneTimeCodeRecord.Purpose(rawValue: "initial_access_token")
    /// A registered client's registration access token (RFC 7592): reads and deletes its registration.
    public static let registrationAccess = OneTimeCodeRecord.Purpose(rawValue: "registration_access")
}

/// Dynamic client registration (RFC 7591) and its management (RFC 7592: read, update, delete). Off unless
/// an operator issues an initial access token (`gatehouse clients registration-token`, or the admin
/// API): each registers one client. A registered client is made by ``ClientAdmin`` with the same
/// rules and settings as a created one, as a third party (the hosted sign-in asks its users'
/// consent) unless the operator changes that.
public struct ClientRegistration: Sendable {
    let persistence: any Persistence
    let clock: any WallClock
    let cache: ClientCache?
    /// Fetches a `sector_identifier_uri` (https, or http to a loopback address; no redirects); without
    /// one, registrations that name such a URI are refused.
    let fetcher: (any FederationHTTP)?

    public init(persistence: any Persistence, clock: any WallClock, cache: ClientCache? = nil, fetcher: (any FederationHTTP)? = nil) {
        self.persistence = persistence
        self.clock = clock
        self.cache = cache
        self.fetcher = fetcher
    }

    /// What the registration answers (RFC 7591 §3.2.1): the client's metadata as registered, its id,
    /// and (once) its secret and registration access token.
    public struct Registered: Encodable, Sendable {
        public var clientID: String
        public var clientSecret: String?
        public var clientIDIssuedAt: Int
        public var clientSecretExpiresAt: Int?
        public var registrationAccessToken: String?
        public var registrationClientURI: String
        public var clientName: String
        public var redirectURIs: [String]
        public var tokenEndpointAuthMethod: String
        public var grantTypes: [String]
        public var responseTypes: [String]
        public var scope: String
        public var idTokenSignedResponseAlg: String
        public var userinfoSignedResponseAlg: String?
        public var requestObjectSigningAlg: String?
        public var backchannelLogoutURI: String?
        public var postLogoutRedirectURIs: [String]?
        public var requirePushedAuthorizationRequests: Bool
        public var subjectType: String
        public var frontchannelLogoutURI: String?
        public var frontchannelLogoutSessionRequired: Bool?
        public var jwksURI: String?
        /// RFC 9449 §5.2: every access token of this client is DPoP-bound (`dpop=required`).
        public var dpopBoundAccessTokens: Bool

        enum CodingKeys: String, CodingKey {
            case clientID = "client_id", clientSecret = "client_secret", clientIDIssuedAt = "client_id_issued_at"
            case clientSecretExpiresAt = "client_secret_expires_at", registrationAccessToken = "registration_access_token"
            case registrationClientURI = "registration_client_uri", clientName = "client_name", redirectURIs = "redirect_uris"
            case tokenEndpointAuthMethod = "token_endpoint_auth_method", grantTypes = "grant_types", responseTypes = "response_types"
            case scope, idTokenSignedResponseAlg = "id_token_signed_response_alg", userinfoSignedResponseAlg =
                "userinfo_signed_response_alg"
            case requestObjectSigningAlg = "request_object_signing_alg", backchannelLogoutURI = "backchannel_logout_uri"
            case postLogoutRedirectURIs = "post_logout_redirect_uris"
            case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
            case subjectType = "subject_type", frontchannelLogoutURI = "frontchannel_logout_uri"
            case frontchannelLogoutSessionRequired = "frontchannel_logout_session_required"
            case jwksURI = "jwks_uri"
            case dpopBoundAccessTokens = "dpop_bound_access_tokens"
        }
    }

    public static let initialTokenLifetime: TimeInterval = 24 * 3600
    static let grantTypes: Set<String> = ["authorization_code", "refresh_token", "client_credentials"]

    /// Issues a one-use initial access token, valid for `ttl` seconds (audited; the token is shown once).
    public func issueInitialAccessToken(ttl: TimeInterval = initialTokenLifetime, actor: AdminActor) async throws -> (String, Date) {
        guard (60...(30 * 24 * 3600)).contains(ttl) else {
            throw ClientAdminError.invalid("the token's lifetime must be between 60 seconds and 30 days")
        }
        let token = Secrets.token(prefix: "gh_iat_")
        let now = clock.now()
        let expires = now.addingTimeInterval(ttl)
        try await persistence.transaction { stores in
            try await stores.codes.insert(
                OneTimeCodeRecord(
                    purpose: .initialAccessToken, identifier: "registration", clientID: "", userID: nil, codeHash: nil,
                    tokenHash: Secrets.sha256Hex(token), maxAttempts: 1, data: nil, createdAt: now, expiresAt: expires))
            try await stores.audit.append(actor.event("registration_token.issued", at: now))
        }
        return (token, expires)
    }

    /// Registers a client from its metadata (the JSON body), spending `initialToken`. The metadata is
    /// checked before the token is spent, so a refused registration can be corrected and sent again.
    public func register(_ metadata: [String: Any], initialToken: String?, issuer: String, meta: RequestMeta) async throws -> Registered {
        // The token first (looked at, not spent): without one, nobody learns what the checks accept.
        let refused = GatehouseError.unauthorized("The initial access token is unknown, used or expired.")
        guard let initialToken, initialToken.utf8.count <= 256 else {
            throw GatehouseError.unauthorized("An initial access token is required to register a client.")
        }
        let hash = Secrets.sha256Hex(initialToken)
        let checkedAt = clock.now()
        let usable = try await persistence.read { stores in
            guard let record = try await stores.codes.find(tokenHash: hash) else { return false }
            return record.purpose == .initialAccessToken && record.consumedAt == nil && record.expiresAt > checkedAt
        }
        guard usable else { throw refused }
        let request = try await sectorChecked(try Self.read(metadata))
        // Everything ClientAdmin will check, checked before the token is spent.
        try Self.precheck(request, kind: request.kind)
        let actor = AdminActor(name: "registration", meta: meta)
        let admin = ClientAdmin(persistence: persistence, clock: clock, cache: cache)
        let now = clock.now()
        let spent = try await persistence.transaction { stores -> Bool in
            guard let record = try await stores.codes.find(tokenHash: hash), record.purpose == .initialAccessToken,
                record.consumedAt == nil, record.expiresAt > now
            else { return false }
            return try await stores.codes.consume(id: record.id, at: now)
        }
        // Spent now, in one statement: of two registrations racing with one token, one wins.
        guard spent else { throw refused }
        let created: ClientAdmin.Created
        do {
            created = try await admin.create(
                id: nil, name: request.name, kind: request.kind, redirectURIs: request.redirectURIs, scopes: request.scopes,
                settings: request.settings, actor: actor)
        } catch ClientAdminError.invalid(let why) {
            throw GatehouseError.invalidClientMetadata(why)
        }
        let access = Secrets.token(prefix: "gh_rat_")
        try await persistence.transaction { stores in
            try await stores.codes.insert(
                OneTimeCodeRecord(
                    purpose: .registrationAccess, identifier: created.client.id, clientID: created.client.id, userID: nil, codeHash: nil,
                    tokenHash: Secrets.sha256Hex(access), maxAttempts: 1, data: nil, createdAt: now,
                    expiresAt: now.addingTimeInterval(10 * 365 * 24 * 3600)))
        }
        var registered = Self.describe(created.client, issuer: issuer, grantTypes: request.grantTypes)
        registered.clientSecret = created.secret
        registered.clientSecretExpiresAt = created.secret == nil ? nil : 0
        registered.registrationAccessToken = access
        return registered
    }

    /// RFC 7592 read: the registration as it stands, for its registration access token. The answer
    /// carries that token back (RFC 7592 §3 requires it; it is the one just presented, never
    /// rotated) but never the client secret: only its hash is kept.
    public func read(clientID: String, accessToken: String?, issuer: String) async throws -> Registered {
        let client = try await authorize(clientID: clientID, accessToken: accessToken)
        var registered = Self.describe(client, issuer: issuer, grantTypes: nil)
        registered.registrationAccessToken = accessToken
        return registered
    }

    /// RFC 7592 update: the metadata sent replaces the registration (members left out return to
    /// their defaults); the client id, its kind and its secret stay. The sector of pairwise subjects
    /// stays too unless a new `sector_identifier_uri` names another.
    public func update(
        clientID: String, accessToken: String?, metadata: [String: Any], issuer: String, meta: RequestMeta
    ) async throws -> Registered {
        let client = try await authorize(clientID: clientID, accessToken: accessToken)
        guard metadata["client_id"] as? String == clientID else {
            throw GatehouseError.invalidClientMetadata("client_id must be sent, and be this client's id")
        }
        for key in ["registration_access_token", "registration_client_uri", "client_secret_expires_at", "client_id_issued_at"]
        where metadata[key] != nil {
            throw GatehouseError.invalidClientMetadata("\(key) must not be sent in an update (RFC 7592 §2.2)")
        }
        if let sent = metadata["client_secret"] {
            guard let text = sent as? String, let hash = client.secretHash,
                Secrets.constantTimeEquals(Secrets.sha256Hex(text), hash)
            else { throw GatehouseError.invalidClientMetadata("client_secret must be the secret issued to this client") }
        }
        let request = try await sectorChecked(try Self.read(metadata))
        guard request.kind == client.kind else {
            throw GatehouseError.invalidClientMetadata("token_endpoint_auth_method cannot change between public and confidential")
        }
        try Self.precheck(request, kind: client.kind, sector: client.settings.sectorIdentifier)
        let updated: ClientRecord
        do {
            updated = try await ClientAdmin(persistence: persistence, clock: clock, cache: cache).update(
                id: clientID, settings: request.settings, name: request.name, redirectURIs: request.redirectURIs, scopes: request.scopes,
                actor: AdminActor(name: "registration", meta: meta))
        } catch ClientAdminError.invalid(let why) {
            throw GatehouseError.invalidClientMetadata(why)
        }
        var registered = Self.describe(updated, issuer: issuer, grantTypes: request.grantTypes)
        registered.registrationAccessToken = accessToken
        return registered
    }

    /// RFC 7592 delete: the client goes (its sessions end), and its registration token with it.
    public func delete(clientID: String, accessToken: String?, meta: RequestMeta) async throws {
        _ = try await authorize(clientID: clientID, accessToken: accessToken)
        try await ClientAdmin(persistence: persistence, clock: clock, cache: cache)
            .delete(id: clientID, actor: AdminActor(name: "registration", meta: meta))
        let now = clock.now()
        let hash = accessToken.map(Secrets.sha256Hex) ?? ""
        try await persistence.transaction { stores in
            if let record = try await stores.codes.find(tokenHash: hash) { _ = try await stores.codes.consume(id: record.id, at: now) }
        }
    }

    /// The client behind a registration access token; 401 for any other token (the same answer for
    /// an unknown client, so a token cannot probe client ids).
    private func authorize(clientID: String, accessToken: String?) async throws -> ClientRecord {
        let refused = GatehouseError.unauthorized("The registration access token is not valid for this client.")
        guard let accessToken, accessToken.utf8.count <= 256 else { throw refused }
        let hash = Secrets.sha256Hex(accessToken)
        let now = clock.now()
        return try await persistence.read { stores in
            guard let record = try await stores.codes.find(tokenHash: hash), record.purpose == .registrationAccess,
                record.consumedAt == nil, record.expiresAt > now, record.clientID == clientID,
                let client = try await stores.clients.find(id: clientID)
            else { throw refused }
            return client
        }
    }

    /// ClientAdmin's rules, run on a scratch record so a refusal spends nothing.
    static func precheck(_ request: Request, kind: ClientRecord.Kind, sector: String? = nil) throws {
        do {
            var scratch = ClientRecord(
                id: "precheck", name: request.name, kind: kind, redirectURIs: request.redirectURIs, scopes: request.scopes,
                createdAt: Date(timeIntervalSince1970: 0))
            scratch.settings.sectorIdentifier = sector
            try ClientSettingsParser.apply(request.settings, to: &scratch.settings)
            for uri in request.redirectURIs { try RedirectURIRule.validateRedirectURI(uri) }
            try ClientAdmin.fixSector(&scratch)
        } catch ClientAdminError.invalid(let why) {
            throw why.contains("redirect")
                ? GatehouseError.invalidRedirectURI(why) : GatehouseError.invalidClientMetadata(why)
        }
    }

    /// A `sector_identifier_uri` (OIDC Registration §5): fetched, it must list every redirect URI the
    /// client registers; its host becomes the sector its pairwise subjects share.
    func sectorChecked(_ request: Request) async throws -> Request {
        guard let uri = request.sectorIdentifierURI else { return request }
        guard RedirectURIRule.isSecureWebURL(uri), let host = URL(string: uri)?.host?.lowercased() else {
            throw GatehouseError.invalidClientMetadata("sector_identifier_uri must be an https URL")
        }
        guard let fetcher else { throw GatehouseError.invalidClientMetadata("sector_identifier_uri cannot be fetched by this server") }
        let listed: [String]
        do {
            let body = try await fetcher.get(uri)
            guard body.count <= 64 * 1024, let uris = try JSONSerialization.jsonObject(with: body) as? [String] else {
                throw ProviderCallError.malformed("not a JSON array of strings")
            }
            listed = uris
        } catch {
            throw GatehouseError.invalidClientMetadata("sector_identifier_uri did not answer a JSON array of redirect URIs")
        }
        guard Set(request.redirectURIs).isSubset(of: Set(listed)) else {
            throw GatehouseError.invalidClientMetadata("every redirect URI must be listed at the sector_identifier_uri")
        }
        var checked = request
        checked.settings.append("sector_identifier=" + host)
        return checked
    }

    struct Request {
        var name: String
        var kind: ClientRecord.Kind
        var redirectURIs: [String]
        var scopes: [String]
        var settings: [String]
        var grantTypes: [String]
        var sectorIdentifierURI: String?
    }

    /// RFC 7591 §2 metadata into ``ClientAdmin``'s terms; unknown members are ignored (§2), values that
    /// cannot be honoured are refused.
    static func read(_ m: [String: Any]) throws -> Request {
        func strings(_ key: String) throws -> [String]? {
            guard let value = m[key] else { return nil }
            guard let list = value as? [String] else { throw GatehouseError.invalidClientMetadata("\(key) must be an array of strings") }
            return list
        }
        func string(_ key: String) throws -> String? {
            guard let value = m[key] else { return nil }
            guard let text = value as? String else { throw GatehouseError.invalidClientMetadata("\(key) must be a string") }
            return text
        }
        let redirects = try strings("redirect_uris") ?? []
        let grants = try strings("grant_types") ?? ["authorization_code"]
        guard Set(grants).isSubset(of: grantTypes) else {
            throw GatehouseError.invalidClientMetadata("grant_types may hold authorization_code, refresh_token and client_credentials")
        }
        let responses = try strings("response_types") ?? (grants.contains("authorization_code") ? ["code"] : [])
        guard Set(responses).isSubset(of: ["code"]) else { throw GatehouseError.invalidClientMetadata("response_types may hold code only") }
        if grants.contains("authorization_code") && redirects.isEmpty {
            throw GatehouseError.invalidRedirectURI("redirect_uris is required for the authorization_code grant")
        }
        let method = try string("token_endpoint_auth_method") ?? "client_secret_basic"
        guard ["client_secret_basic", "client_secret_post", "none"].contains(method) else {
            throw GatehouseError.invalidClientMetadata("token_endpoint_auth_method must be client_secret_basic, client_secret_post or none")
        }
        if method == "none" && grants.contains("client_credentials") {
            throw GatehouseError.invalidClientMetadata("a public client (none) cannot use client_credentials")
        }
        if m["jwks_uri"] != nil && m["jwks"] != nil {
            throw GatehouseError.invalidClientMetadata("jwks and jwks_uri must not both be sent (RFC 7591 §2)")
        }
        // Every member this reads is set, to its default when left out: an update replaces the
        // registration (RFC 7592 §2.2), and a registration starts from the defaults anyway.
        var settings = ["third_party=on"]
        if let jwks = m["jwks"] {
            guard JSONSerialization.isValidJSONObject(jwks), let data = try? JSONSerialization.data(withJSONObject: jwks) else {
                throw GatehouseError.invalidClientMetadata("jwks must be a JWK Set")
            }
            settings.append("jwks=" + String(decoding: data, as: UTF8.self))
        } else {
            settings.append("jwks=")
        }
        let defaults = [
            "id_token_signed_response_alg": "RS256", "userinfo_signed_response_alg": "", "request_object_signing_alg": "",
            "backchannel_logout_uri": "", "frontchannel_logout_uri": "", "subject_type": "public", "jwks_uri": "",
        ]
        for key in defaults.keys.sorted() { settings.append("\(key)=\(try string(key) ?? defaults[key]!)") }
        settings.append("post_logout_redirect_uris=" + (try strings("post_logout_redirect_uris") ?? []).joined(separator: ","))
        settings.append("logo_url=" + (try string("logo_uri") ?? ""))
        for key in ["require_pushed_authorization_requests", "frontchannel_logout_session_required"] {
            guard let value = m[key] else { continue }
            guard let flag = value as? Bool else { throw GatehouseError.invalidClientMetadata("\(key) must be a boolean") }
            // Gatehouse always sends `iss` and `sid` to front-channel logout URIs: nothing to store.
            if key == "require_pushed_authorization_requests" { settings.append("\(key)=" + (flag ? "on" : "off")) }
        }
        if m["require_pushed_authorization_requests"] == nil { settings.append("require_pushed_authorization_requests=off") }
        // RFC 9449 §5.2: true makes a proof required for every token; left out, the default (allowed).
        if let value = m["dpop_bound_access_tokens"] {
            guard let flag = value as? Bool else {
                throw GatehouseError.invalidClientMetadata("dpop_bound_access_tokens must be a boolean")
            }
            settings.append("dpop=" + (flag ? "required" : "allowed"))
        } else {
            settings.append("dpop=allowed")
        }
        let allowed = ClientRecord.defaultScopes + ["address", "phone"]
        let asked = (try string("scope")).map { $0.split(separator: " ").map(String.init) } ?? ClientRecord.defaultScopes
        guard Set(asked).isSubset(of: Set(allowed)) else {
            throw GatehouseError.invalidClientMetadata("scope may hold \(allowed.joined(separator: " "))")
        }
        let name = try string("client_name") ?? "Registered client"
        return Request(
            name: String(name.prefix(200)), kind: method == "none" ? .public : .confidential, redirectURIs: redirects, scopes: asked,
            settings: settings, grantTypes: grants, sectorIdentifierURI: try string("sector_identifier_uri"))
    }

    static func describe(_ client: ClientRecord, issuer: String, grantTypes: [String]?) -> Registered {
        let s = client.settings
        return Registered(
            clientID: client.id, clientSecret: nil, clientIDIssuedAt: Int(client.createdAt.timeIntervalSince1970),
            clientSecretExpiresAt: nil, registrationAccessToken: nil, registrationClientURI: issuer + "/oauth/register/" + client.id,
            clientName: client.name, redirectURIs: client.redirectURIs,
            tokenEndpointAuthMethod: client.kind == .public ? "none" : "client_secret_basic",
            grantTypes: grantTypes ?? ["authorization_code", "refresh_token"]
                + (client.kind == .confidential ? ["client_credentials"] : []),
            responseTypes: ["code"], scope: client.scopes.joined(separator: " "),
            idTokenSignedResponseAlg: s.idTokenSigningAlgorithm.rawValue, userinfoSignedResponseAlg: s.userinfoSigningAlgorithm?.rawValue,
            requestObjectSigningAlg: s.requestObjectSigningAlgorithm?.rawValue, backchannelLogoutURI: s.backchannelLogoutURI,
            postLogoutRedirectURIs: s.postLogoutRedirectURIs.isEmpty ? nil : s.postLogoutRedirectURIs,
            requirePushedAuthorizationRequests: s.requirePushedAuthorizationRequests.isOn, subjectType: s.subjectType.rawValue,
            frontchannelLogoutURI: s.frontchannelLogoutURI, frontchannelLogoutSessionRequired: s.frontchannelLogoutURI == nil ? nil : true,
            jwksURI: s.jwksURI, dpopBoundAccessTokens: s.dpop == .required)
    }
}
