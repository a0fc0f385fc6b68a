import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

/// `/admin/v1/users` and `/admin/v1/sessions`: operators' work on accounts (``UserAdmin``).
struct AdminUserRoutes: Sendable {
    let users: UserAdmin

    init(services: CoreServices) { self.users = UserAdmin(services: services) }

    @Sendable func search(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.users)
        let query = try AdminQuery(request: request)
        var search = UserSearch(limit: try query.limit())
        search.email = try query.string("email")
        search.phone = try query.string("phone", max: 20)
        search.id = try query.uuid("id")
        search.credentialType = try query.string("provider", max: 64)
        if let state = try query.string("state", max: 20) {
            guard state == "active" || state == "disabled" else { throw GatehouseError.badRequest("state must be active or disabled.") }
            search.state = UserState(rawValue: state)
        }
        search.createdAfter = try query.date("created_after")
        search.createdBefore = try query.date("created_before")
        search.signedInAfter = try query.date("signed_in_after")
        search.signedInBefore = try query.date("signed_in_before")
        search.after = try query.cursor()
        let found = try await users.search(search)
        let next = found.count == search.limit ? found.last.map { AdminCursor.encode($0.createdAt, $0.id) } : nil
        return try Responses.json(AdminUserPage(users: found.map(\.wire), nextCursor: next), noStore: true)
    }

    @Sendable func show(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.users)
        return try Responses.json(try await users.show(id: try context.pathID()).wire, noStore: true)
    }

    @Sendable func create(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        let body = try await RequestDecoding.json(AdminUserCreate.self, from: request, context: context)
        let draft = UserDraft(
            email: body.email, phone: body.phone, password: body.password, emailVerified: body.emailVerified ?? false,
            phoneVerified: body.phoneVerified ?? false, profile: body.profile, appMetadata: body.appMetadata)
        return try Responses.json(try await users.create(draft, actor: context.actor).wire, status: .created, noStore: true)
    }

    @Sendable func update(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        let id = try context.pathID()
        let body = try await RequestDecoding.json(AdminUserUpdate.self, from: request, context: context)
        let change = UserChange(
            email: body.email, phone: body.phone, emailVerified: body.emailVerified, phoneVerified: body.phoneVerified,
            profile: body.profile, appMetadata: body.appMetadata)
        return try Responses.json(try await users.update(id: id, change, actor: context.actor).wire, noStore: true)
    }

    @Sendable func disable(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        return try Responses.json(try await users.setDisabled(id: try context.pathID(), true, actor: context.actor).wire, noStore: true)
    }

    @Sendable func enable(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        return try Responses.json(try await users.setDisabled(id: try context.pathID(), false, actor: context.actor).wire, noStore: true)
    }

    @Sendable func delete(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        try await users.delete(id: try context.pathID(), actor: context.actor)
        return Responses.noContent()
    }

    @Sendable func signOut(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        let ended = try await users.signOut(id: try context.pathID(), actor: context.actor)
        return try Responses.json(AdminSignOut(revokedSessions: ended), noStore: true)
    }

    @Sendable func passwordReset(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        let id = try context.pathID()
        let body = try await RequestDecoding.optionalJSON(AdminPasswordReset.self, from: request, context: context)
        try await users.sendPasswordReset(id: id, clientID: body?.clientId, actor: context.actor)
        return Responses.noContent()
    }

    @Sendable func export(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.users)
        return try Responses.json(try await users.export(id: try context.pathID(), actor: context.actor), noStore: true)
    }

    @Sendable func factors(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.users)
        return try Responses.json(try await users.factors(id: try context.pathID()), noStore: true)
    }

    @Sendable func resetFactors(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        let removed = try await users.resetFactors(id: try context.pathID(), actor: context.actor)
        return try Responses.json(AdminFactorReset(removedFactors: removed), noStore: true)
    }

    @Sendable func removePasskey(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        guard let passkey = context.parameters.get("passkey_id"), !passkey.isEmpty, passkey.count <= 64 else {
            throw GatehouseError.notFound("No such passkey.")
        }
        try await users.removePasskey(id: try context.pathID(), passkeyID: passkey, actor: context.actor)
        return Responses.noContent()
    }

    @Sendable func sessions(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireRead(AdminScope.users)
        let sessions = try await users.sessions(id: try context.pathID())
        return try Responses.json(AdminSessionList(sessions: sessions.map(UserExport.Session.init)), noStore: true)
    }

    @Sendable func revokeSession(_ request: Request, context: AdminContext) async throws -> Response {
        try context.requireWrite(AdminScope.users)
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
            throw GatehouseError.notFound("No live session with this id.")
        }
        try await users.revokeSession(id: id, actor: context.actor)
        return Responses.noContent()
    }
}
