import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

/// `/admin/v1/clients`, `/admin/v1/keys` and `/admin/v1/audit`: what the CLI's `clients`, `keys` and
/// `audit` commands do, through the same core code.
struct AdminServiceRoutes: Sendable {
    let clients: ClientAdmin
    let keys: KeyAdmin
    let signingKeys: SigningKeys
    let audit: AuditLog
    let registration: ClientRegistration

    init(services: CoreServices, keys: SigningKeys) {
        self.clients = ClientAdmin(persistence: services.persistence, clock: services.clock, cache: services.clientCache)
        self.registration = ClientRegistration(persistence: services.persistence, clock: services.clock, cache: services.clientCache)
        self.keys = KeyAdmin(keys: keys, clock: services.clock)
        self.signingKeys = keys
        self.audit = AuditLog(persistence: services.persistence)
    }

    // MARK: Clients

    @Sendable func listClients(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.clients)
        return try Responses.json(AdminClientList(clients: try await clients.list().map { ClientView($0) }), noStore: true)
    }

    @Sendable func showClient(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.clients)
        return try Responses.json(
            ClientView(try await Self.mapped { try await clients.show(id: try Self.clientID(context)) }), noStore: true)
    }

    @Sendable func createClient(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.clients)
        let body = try await RequestDecoding.json(AdminClientCreate.self, from: request, context: context)
        let created = try await Self.mapped {
            try await clients.create(
                id: body.clientId, name: body.name, kind: body.type ?? .public, redirectURIs: body.redirectUris ?? [],
                scopes: body.scopes ?? [], settings: Self.assignments(body.settings), actor: context.actor)
        }
        return try Responses.json(ClientView(created.client, secret: created.secret), status: .created, noStore: true)
    }

    @Sendable func updateClient(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.clients)
        let id = try Self.clientID(context)
        let body = try await RequestDecoding.json(AdminClientUpdate.self, from: request, context: context)
        let updated = try await Self.mapped {
            try await clients.update(
                id: id, settings: Self.assignments(body.settings), name: body.name, redirectURIs: body.redirectUris, scopes: body.scopes,
                actor: context.actor)
        }
        return try Responses.json(ClientView(updated), noStore: true)
    }

    @Sendable func deleteClient(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.clients)
        let id = try Self.clientID(context)
        try await Self.mapped { try await clients.delete(id: id, actor: context.actor) }
        return Responses.noContent()
    }

    /// An initial access token for dynamic client registration (one client, `ttl` seconds, default a day).
    @Sendable func issueRegistrationToken(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.clients)
        let body = try await RequestDecoding.optionalJSON(AdminRegistrationTokenRequest.self, from: request, context: context)
        let (token, expires) = try await Self.mapped {
            try await registration.issueInitialAccessToken(
                ttl: TimeInterval(body?.ttl ?? Int(ClientRegistration.initialTokenLifetime)), actor: context.actor)
        }
        return try Responses.json(AdminRegistrationToken(token: token, expiresAt: expires), status: .created, noStore: true)
    }

    // MARK: Keys

    @Sendable func listKeys(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.keys)
        let list = try await keys.list().map {
            AdminKey(
                kid: $0.kid, algorithm: $0.algorithm, current: $0.retiredAt == nil, createdAt: $0.createdAt, retiredAt: $0.retiredAt,
                publishUntil: $0.publishUntil)
        }
        return try Responses.json(AdminKeyList(keys: list), noStore: true)
    }

    @Sendable func rotateKey(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.keys)
        let kids = try await keys.rotate(actor: context.actor)
        return try Responses.json(AdminKeyRotated(kid: kids[0], kids: kids), status: .created, noStore: true)
    }

    @Sendable func revokeKey(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.keys)
        guard let kid = context.parameters.get("kid"), kid.count <= 200 else { throw GatehouseError.notFound("No such key.") }
        do {
            return try Responses.json(
                AdminKeyRevoked(kid: kid, replaced: try await keys.revoke(kid: kid, actor: context.actor)), noStore: true)
        } catch SigningKeysError.unknownKey {
            throw GatehouseError.notFound("No published key has this kid.")
        }
    }

    // MARK: Audit

    @Sendable func listAudit(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.audit)
        let query = try AdminQuery(request: request)
        var filter = AuditQuery(limit: try query.limit(default: 100, max: 1000))
        filter.userID = try query.uuid("user_id")
        filter.type = try query.string("type", max: 100)
        filter.clientID = try query.string("client_id", max: 100)
        filter.since = try query.date("since")
        filter.after = try query.cursor().map { (at: $0.0, id: $0.1) }
        let events = try await audit.list(filter)
        let next = events.count == filter.limit ? events.last.map { AdminCursor.encode($0.at, $0.id) } : nil
        return try Responses.json(AdminAuditPage(events: events.map(UserExport.Event.init), nextCursor: next), noStore: true)
    }

    // MARK: Helpers

    static func clientID(_ context: AdminContext) throws -> String {
        guard let id = context.parameters.get("id"), id.count <= 100 else { throw GatehouseError.notFound("No such client.") }
        return id
    }

    /// `{"key": "value"}` as the CLI's `--set key=value` lines.
    static func assignments(_ settings: [String: String]?) -> [String] {
        (settings ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }

    /// The CLI's errors as the API's: a refused value is a 400 naming it, an unknown client a 404.
    static func mapped<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ClientAdminError {
            switch error {
            case .invalid(let why): throw GatehouseError.badRequest(why)
            case .notFound: throw GatehouseError.notFound(error.description)
            }
        }
    }
}
