import Foundation
import GatehouseCore
import Hummingbird

/// The admin API's query parameters, each refused with a 400 that names it when malformed.
struct AdminQuery {
    /// Decoded once per request, however many parameters the handler reads.
    let fields: [String: String]

    init(request: Request) throws { fields = try request.queryFields() }

    func string(_ name: String, max: Int = 320) throws -> String? {
        guard let value = fields[name], !value.isEmpty else { return nil }
        guard value.count <= max else { throw GatehouseError.badRequest("\(name) is too long.") }
        return value
    }

    func uuid(_ name: String) throws -> UUID? {
        guard let text = try string(name, max: 36) else { return nil }
        guard let id = UUID(uuidString: text) else { throw GatehouseError.badRequest("\(name) must be a UUID.") }
        return id
    }

    /// RFC 3339 date-time (`2026-11-25T10:00:00Z`, fractional seconds allowed).
    func date(_ name: String) throws -> Date? {
        guard let text = try string(name, max: 40) else { return nil }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        throw GatehouseError.badRequest("\(name) must be an RFC 3339 date-time, like 2026-11-25T10:00:00Z.")
    }

    func limit(default value: Int = 50, max: Int = 200) throws -> Int {
        guard let text = try string("limit", max: 6) else { return value }
        guard let limit = Int(text), (1...max).contains(limit) else { throw GatehouseError.badRequest("limit must be 1–\(max).") }
        return limit
    }

    func cursor() throws -> (Date, UUID)? {
        try string("cursor", max: 200).map(AdminCursor.decode)
    }
}

extension AdminContext {
    func requireRead(_ area: String) throws {
        guard admin.mayRead(area) else { throw GatehouseError.forbidden("This credential's scopes do not allow reading \(area).") }
    }

    func requireWrite(_ area: String) throws {
        guard admin.mayWrite(area) else { throw GatehouseError.forbidden("This credential's scopes do not allow changes (\(area)).") }
    }

    var actor: AdminActor { .client(admin, meta: meta) }

    func pathID(_ name: String = "id") throws -> UUID {
        guard let id = parameters.get(name).flatMap(UUID.init(uuidString:)) else {
            throw GatehouseError.notFound("No such \(name == "id" ? "user" : name).")
        }
        return id
    }
}
