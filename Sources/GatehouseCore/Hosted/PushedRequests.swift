import Foundation

extension OneTimeCodeRecord.Purpose {
    /// An authorization request pushed to `/oauth/par` (RFC 9126), waiting for its `request_uri`.
    public static let pushedRequest = OneTimeCodeRecord.Purpose(rawValue: "pushed_request")
}

/// Pushed authorization requests (RFC 9126): the client sends the request over the back channel,
/// authenticated, and gets a `request_uri` that the browser then brings to `/oauth/authorize` with
/// nothing but `client_id`. The request is checked when pushed, exactly as the authorization endpoint
/// checks one (request object, hint and all), and kept whole: one use, a minute.
public struct PushedRequests: Sendable {
    let services: CoreServices
    public static let lifetime: TimeInterval = 60
    public static let prefix = "urn:ietf:params:oauth:request_uri:"

    public init(services: CoreServices) { self.services = services }

    public struct Pushed: Encodable, Sendable {
        public var requestURI: String
        public var expiresIn: Int
        enum CodingKeys: String, CodingKey {
            case requestURI = "request_uri"
            case expiresIn = "expires_in"
        }
    }

    /// Checks and keeps `parameters` for `client` (already authenticated). Problems are OAuth errors
    /// in the answer (RFC 9126 §2.3), never redirects: nothing was asked of a browser yet.
    public func push(_ parameters: [String: String], client: ClientRecord, meta: RequestMeta) async throws -> Pushed {
        var p = parameters
        for credential in ["client_secret", "client_assertion", "client_assertion_type"] { p[credential] = nil }
        if let named = p["client_id"], named != client.id { throw GatehouseError.badRequest("client_id does not match the client.") }
        if p["request_uri"] != nil { throw GatehouseError.badRequest("request_uri cannot be pushed.") }
        p["client_id"] = client.id
        let now = services.clock.now()
        // A row per push: counted per address block like every other flow a browser could start.
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: now)
        let request: AuthorizationRequest
        do {
            (request, _) = try await AuthorizationRequest.parse(p, services: services, pushed: true)
        } catch let untrusted as AuthorizationRequest.Untrusted {
            throw GatehouseError.badRequest(untrusted.detail)
        } catch let refused as AuthorizationRequest.Refused {
            throw refused.error == "invalid_scope"
                ? GatehouseError.invalidScope(refused.description)
                : refused.error == "invalid_request_object"
                    ? GatehouseError.invalidRequestObject(refused.description) : GatehouseError.badRequest(refused.description)
        }
        let uri = Self.prefix + Secrets.token(prefix: "")
        let data = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        try await services.persistence.transaction { stores in
            try await stores.codes.insert(
                OneTimeCodeRecord(
                    purpose: .pushedRequest, identifier: client.id, clientID: client.id, userID: nil, codeHash: nil,
                    tokenHash: Secrets.sha256Hex(uri), maxAttempts: 1, data: data, createdAt: now,
                    expiresAt: now.addingTimeInterval(Self.lifetime)))
        }
        return Pushed(requestURI: uri, expiresIn: Int(Self.lifetime))
    }

    /// The pushed request behind `requestURI`, used up. Unknown, used, expired or another client's is
    /// ``AuthorizationRequest/Untrusted``: without the request nothing proves where to redirect.
    func take(_ requestURI: String, clientID: String?) async throws -> (AuthorizationRequest, ClientRecord) {
        guard let clientID, !clientID.isEmpty else { throw AuthorizationRequest.Untrusted(detail: "client_id is missing.") }
        guard requestURI.hasPrefix(Self.prefix) else {
            throw AuthorizationRequest.Untrusted(detail: "request_uri is not one this server issued.")
        }
        let record: OneTimeCodeRecord
        do {
            record = try await services.codes.redeem(token: requestURI, purpose: .pushedRequest, endsSiblings: false)
        } catch let error as GatehouseError where error.category != .unavailable {
            throw AuthorizationRequest.Untrusted(detail: "The pushed request is unknown, used or expired.")
        }
        guard record.clientID == clientID, let data = record.data,
            let request = try? JSONDecoder().decode(AuthorizationRequest.self, from: Data(data.utf8))
        else { throw AuthorizationRequest.Untrusted(detail: "The pushed request is another client's.") }
        let client: ClientRecord
        do {
            client = try await services.clients.resolve(clientID)
        } catch let error as GatehouseError where error.category != .internalFailure && error.category != .unavailable {
            throw AuthorizationRequest.Untrusted(detail: "The client is not known.")
        }
        return (request, client)
    }
}

extension AuthorizationRequest {
    /// Parses with what the running server knows: its ID tokens (for `id_token_hint`) and the
    /// once-only claims of signed request objects, shared by every node.
    static func parse(
        _ query: [String: String], services: CoreServices, pushed: Bool = false
    ) async throws -> (AuthorizationRequest, ClientRecord) {
        let tokens = services.tokens
        let persistence = services.persistence
        let now = services.clock.now()
        let objects = RequestObject.Checks(
            issuer: tokens.issuer, now: now,
            claimOnce: { key, until in
                let window = max(1, until.timeIntervalSince(now))
                return try await persistence.transaction { try await $0.attempts.recordFailure(key: key, now: now, window: window) }
                    .count == 1
            }, keys: services.clientKeys)
        return try await parse(
            query, clients: services.clients, hint: { await tokens.verifyIDTokenHint($0)?.sub }, objects: objects, pushed: pushed)
    }
}
