import Foundation

/// Client management for the CLI and the admin API: create, list, show, update, delete. Changes are
/// audited (`admin.client.…`, with the actor) in their own transaction.
public struct ClientAdmin: Sendable {
    let persistence: any Persistence
    let clock: any WallClock
    /// The running server's cache, when this admin runs inside it, so changes apply at once.
    let cache: ClientCache?

    public init(persistence: any Persistence, clock: any WallClock, cache: ClientCache? = nil) {
        self.persistence = persistence
        self.clock = clock
        self.cache = cache
    }

    public struct Created: Sendable {
        public var client: ClientRecord
        /// Shown once; only its hash is stored.
        public var secret: String?
    }

    public func create(
        id: String?, name: String, kind: ClientRecord.Kind, redirectURIs: [String], scopes: [String],
        settings: [String], isDefault: Bool = false, actor: AdminActor = .commandLine
    ) async throws -> Created {
        guard !name.isEmpty, name.count <= 200 else { throw ClientAdminError.invalid("name must be 1–200 characters") }
        let clientID = id ?? Self.makeID()
        guard Self.isValidID(clientID) else {
            throw ClientAdminError.invalid("client id may hold letters, digits, '-', '_' and '.', up to 100")
        }
        for uri in redirectURIs { try RedirectURIRule.validateRedirectURI(uri) }
        var record = ClientRecord(
            id: clientID, name: name, kind: kind, redirectURIs: redirectURIs,
            scopes: scopes.isEmpty ? ClientRecord.defaultScopes : scopes, isDefault: isDefault, createdAt: clock.now())
        try ClientSettingsParser.apply(settings, to: &record.settings)
        try Self.fixSector(&record)
        var secret: String?
        if kind == .confidential {
            let fresh = Secrets.token(prefix: "gh_cs_")
            record.secretHash = Secrets.sha256Hex(fresh)
            secret = fresh
        }
        let toInsert = record
        let now = clock.now()
        do {
            try await persistence.transaction { stores in
                try await stores.clients.insert(toInsert)
                try await stores.audit.append(actor.event("client.created", at: now, clientID: clientID))
            }
        } catch StoreError.conflict {
            throw ClientAdminError.invalid("a client with id \(clientID) already exists")
        }
        return Created(client: record, secret: secret)
    }

    public func list() async throws -> [ClientRecord] {
        try await persistence.read { try await $0.clients.list() }
    }

    public func show(id: String) async throws -> ClientRecord {
        guard let client = try await persistence.read({ try await $0.clients.find(id: id) }) else {
            throw ClientAdminError.notFound(id)
        }
        return client
    }

    public func update(
        id: String, settings: [String], name: String? = nil, redirectURIs: [String]? = nil, scopes: [String]? = nil,
        actor: AdminActor = .commandLine
    ) async throws -> ClientRecord {
        if let name { guard !name.isEmpty, name.count <= 200 else { throw ClientAdminError.invalid("name must be 1–200 characters") } }
        for uri in redirectURIs ?? [] { try RedirectURIRule.validateRedirectURI(uri) }
        let now = clock.now()
        defer { cache?.invalidate(id: id) }
        return try await persistence.transaction { stores in
            guard var client = try await stores.clients.find(id: id) else { throw ClientAdminError.notFound(id) }
            try ClientSettingsParser.apply(settings, to: &client.settings)
            if let name { client.name = name }
            if let redirectURIs { client.redirectURIs = redirectURIs }
            if let scopes { client.scopes = scopes }
            try Self.fixSector(&client)
            client.updatedAt = now
            try await stores.clients.update(client)
            try await stores.audit.append(actor.event("client.updated", at: now, clientID: id))
            return client
        }
    }

    /// Deletes the client and ends its sessions, so a client later created with the same id cannot
    /// inherit them.
    public func delete(id: String, actor: AdminActor = .commandLine) async throws {
        let now = clock.now()
        defer { cache?.invalidate(id: id) }
        let deleted = try await persistence.transaction { stores -> Bool in
            guard try await stores.clients.delete(id: id) else { return false }
            _ = try await stores.sessions.revokeAll(clientID: id, at: now, reason: .clientDeleted)
            try await stores.audit.append(actor.event("client.deleted", at: now, clientID: id))
            return true
        }
        guard deleted else { throw ClientAdminError.notFound(id) }
    }

    /// Creates the default public client on an empty database; returns it when it was created now.
    public func ensureDefault() async throws -> ClientRecord? {
        if try await persistence.read({ try await $0.clients.findDefault() }) != nil { return nil }
        return try await create(
            id: nil, name: "Default app", kind: .public, redirectURIs: [], scopes: [], settings: [], isDefault: true, actor: .system
        ).client
    }

    /// A pairwise client keeps the sector it was given or had when pairwise subjects were turned on:
    /// its users' subjects must not move with its redirect URIs.
    static func fixSector(_ client: inout ClientRecord) throws {
        guard client.settings.subjectType == .pairwise, client.settings.sectorIdentifier == nil else { return }
        guard let sector = SubjectIdentifiers.sector(of: client.redirectURIs) else {
            throw ClientAdminError.invalid(
                "subject_type=pairwise needs a sector_identifier (the host whose subjects it shares) unless all callback URIs share one host"
            )
        }
        client.settings.sectorIdentifier = sector
    }

    static func makeID() -> String { "gh_c_" + Base64URL.encode(Secrets.randomBytes(12)) }

    static func isValidID(_ id: String) -> Bool {
        (1...100).contains(id.count) && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }
}
