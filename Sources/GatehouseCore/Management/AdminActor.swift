import Foundation

/// Who performs an operator's action, for the audit log: an admin API credential (`client:<id>`), an
/// operator in the console (`console:<name>`) or the command line on the server's machine (`cli`),
/// with the request that carried it.
public struct AdminActor: Sendable {
    public var name: String
    public var meta: RequestMeta

    public init(name: String, meta: RequestMeta = RequestMeta()) {
        self.name = name
        self.meta = meta
    }

    public static func client(_ principal: AdminPrincipal, meta: RequestMeta) -> AdminActor {
        AdminActor(name: (principal.isConsole ? "console:" : "client:") + principal.clientID, meta: meta)
    }

    public static let commandLine = AdminActor(name: "cli")
    /// The server itself (the default client made on first start).
    public static let system = AdminActor(name: "system")

    /// The audit event for `action` (`user.deleted` becomes type `admin.user.deleted`).
    public func event(_ action: String, at: Date, userID: UUID? = nil, clientID: String? = nil, reason: String? = nil) -> AuditEvent {
        AuditEvent(
            at: at, type: AuditEvent.admin(action), userID: userID, clientID: clientID, method: "admin", reason: reason,
            actor: name, meta: meta)
    }
}
