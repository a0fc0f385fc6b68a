import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The admin console under `/admin/console`: server-rendered pages over the same core code as the
/// admin API and the CLI (``UserAdmin``, ``ClientAdmin``, ``KeyAdmin``, ``AuditLog``). No JavaScript;
/// every form carries a CSRF token bound to the session; every action is audited as `console:<name>`.
struct ConsoleRoutes: Sendable {
    let access: ConsoleAccess
    let users: UserAdmin
    let clients: ClientAdmin
    let keys: KeyAdmin
    let signingKeys: SigningKeys
    let audit: AuditLog
    let persistence: any Persistence
    let clock: any WallClock
    let templates: ConsoleTemplates
    let secret: ServerSecret
    let secureCookies: Bool
    let limiter: RateLimiter

    static let enterCookie = "gh_console_enter"
    static let chartDays = 14

    init(services: CoreServices, keys: SigningKeys, templates: ConsoleTemplates) {
        self.access = ConsoleAccess(persistence: services.persistence, clock: services.clock)
        self.users = UserAdmin(services: services)
        self.clients = ClientAdmin(persistence: services.persistence, clock: services.clock, cache: services.clientCache)
        self.keys = KeyAdmin(keys: keys, clock: services.clock)
        self.signingKeys = keys
        self.audit = AuditLog(persistence: services.persistence)
        self.persistence = services.persistence
        self.clock = services.clock
        self.templates = templates
        self.secret = services.secret
        self.secureCookies = services.settings.secureCookies
        self.limiter = services.rateLimits
    }

    // MARK: Signing in

    /// The link opens a page that asks; only its POST spends the link (link previews fetch with GET).
    @Sendable func enterPage(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let token = (try request.queryFields())["token"], token.hasPrefix("gh_cl_"), token.utf8.count <= 100 else {
            throw GatehouseError.badRequest("This is not a console sign-in link.")
        }
        let nonce = Base64URL.encode(Secrets.randomBytes(16))
        let html = templates.render(
            "enter", title: "Sign in to the console", operatorName: nil, csrf: secret.csrfToken(for: "console-enter:" + nonce),
            values: ["token": token])
        let cookie = SetCookie(
            name: Self.enterCookie, value: nonce, path: "/admin/console", maxAge: 600, sameSite: .strict, secure: secureCookies)
        return PageResponses.html(html, cookie: cookie.headerValue)
    }

    @Sendable func enter(_ request: Request, context: AppRequestContext) async throws -> Response {
        let fields = try await RequestDecoding.formFields(from: request)
        guard let nonce = Cookies(request)[Self.enterCookie], let sent = fields["csrf"],
            secret.csrfMatches(sent, for: "console-enter:" + nonce)
        else { throw GatehouseError.csrfMismatch }
        guard let token = fields["token"], token.utf8.count <= 100 else { throw GatehouseError.badRequest("No sign-in link.") }
        // Per address block, before the link is looked up: a flood of tries is cut short.
        try await limiter.consume(.admin, ip: context.meta.ipAddress, persistence: persistence, now: clock.now())
        let entered = try await access.enter(linkToken: token, meta: context.meta)
        var response = PageResponses.redirect(to: URL(string: "/admin/console")!)
        let session = SetCookie(
            name: ConsoleAuthenticator.cookie, value: entered.token, path: "/admin/console", maxAge: Int(ConsoleAccess.sessionLifetime),
            sameSite: .strict, secure: secureCookies)
        let spent = SetCookie(
            name: Self.enterCookie, value: "", path: "/admin/console", maxAge: 0, sameSite: .strict, secure: secureCookies)
        response.headers[values: .setCookie] = [session.headerValue, spent.headerValue]
        return response
    }

    @Sendable func signOut(_ request: Request, context: AdminContext) async throws -> Response {
        let (token, _) = try await checkedForm(request, context)
        try await access.signOut(sessionToken: token, meta: context.meta)
        let gone = SetCookie(
            name: ConsoleAuthenticator.cookie, value: "", path: "/admin/console", maxAge: 0, sameSite: .strict, secure: secureCookies)
        let html = templates.render(
            "message", title: "Signed out", operatorName: nil, csrf: nil, values: ["body": "The console session has ended."])
        return PageResponses.html(html, cookie: gone.headerValue)
    }

    // MARK: Pages

    @Sendable func overview(_ request: Request, context: AdminContext) async throws -> Response {
        let activity = try await access.activity(days: Self.chartDays)
        let now = clock.now()
        let total = try await persistence.read { try await $0.users.count() }
        let charts: [[String: Any]] = [
            ("user.signed_in", "Sign-ins", "#1f4fbf"), ("user.created", "Sign-ups", "#2c7a3f"),
            ("sign_in.failed", "Failed sign-ins", "#9b1c1c"), ("refresh", "Sessions refreshed", "#6b4fbf"),
        ].map { name, label, colour in
            let counts = ConsoleChart.series(activity, name, days: Self.chartDays, now: now)
            return [
                "label": label, "svg": ConsoleChart.bars(counts, label: label, colour: colour), "total": counts.reduce(0, +),
                "today": counts.last ?? 0,
            ]
        }
        return page(
            "overview", title: "Overview", nav: "Overview", context: context, request: request,
            values: ["charts": charts, "days": Self.chartDays, "users": total])
    }

    @Sendable func usersPage(_ request: Request, context: AdminContext) async throws -> Response {
        let fields = try request.queryFields()
        let query = (fields["q"] ?? "").trimmingCharacters(in: .whitespaces)
        guard query.count <= 320 else { throw GatehouseError.badRequest("The search is too long.") }
        var search = UserSearch(limit: 50)
        if let id = UUID(uuidString: query) {
            search.id = id
        } else if let first = query.first, first == "+" || first.isNumber {
            search.phone = query
        } else if !query.isEmpty {
            search.email = query
        }
        search.after = try fields["cursor"].map(AdminCursor.decode)
        let found = try await users.search(search)
        let rows: [[String: Any]] = found.map { user in
            [
                "id": user.id.uuidString.lowercased(), "label": user.email ?? user.phone ?? user.id.uuidString.lowercased(),
                "phone": user.phone ?? "", "state": user.state.rawValue, "disabled": user.state == .disabled,
                "created": ConsoleTemplates.time(user.createdAt), "lastLogin": ConsoleTemplates.time(user.lastLoginAt),
            ]
        }
        var values: [String: Any] = ["query": query, "users": rows, "hasUsers": !rows.isEmpty]
        if found.count == search.limit, let last = found.last { values["next"] = AdminCursor.encode(last.createdAt, last.id) }
        return page("users", title: "Users", nav: "Users", context: context, request: request, values: values)
    }

    @Sendable func userPage(_ request: Request, context: AdminContext) async throws -> Response {
        let id = try context.pathID()
        let user = try await users.show(id: id)
        let sessions = try await users.sessions(id: id, limit: 50)
        let now = clock.now()
        let (all, events) = try await persistence.read { stores in
            var recent = AuditQuery(userID: id, limit: 20)
            recent.newestFirst = true
            return (try await stores.credentials.list(userID: id, type: nil), try await stores.audit.list(recent))
        }
        // Recovery codes are counted, never listed: their identifiers are keyed hashes of the codes.
        let credentials = all.filter { $0.type != .recoveryCode }
        let factors = try await users.factors(id: id)
        let csrf = try csrfToken(request)
        let values: [String: Any] = [
            "id": id.uuidString.lowercased(), "email": user.email ?? "", "emailVerified": user.emailVerified, "phone": user.phone ?? "",
            "phoneVerified": user.phoneVerified, "state": user.state.rawValue, "disabled": user.state == .disabled,
            "created": ConsoleTemplates.time(user.createdAt), "lastLogin": ConsoleTemplates.time(user.lastLoginAt),
            "profile": Self.json(user.profile), "appMetadata": user.appMetadata.map(Self.json) ?? "—",
            "credentials": credentials.map { credential -> [String: Any] in
                var device = ""
                if let config = try? credential.decodeConfig(DeviceAuthenticatorStrategy.Config.self) {
                    device = "\(config.kind.rawValue) · \(config.deviceName ?? config.deviceID)"
                }
                return [
                    "type": credential.type.rawValue, "identifiers": credential.identifiers.joined(separator: ", "), "device": device,
                    "failures": credential.failureCount, "created": ConsoleTemplates.time(credential.createdAt),
                ]
            },
            "hasCredentials": !credentials.isEmpty,
            "factors": factors.factors.map {
                [
                    "type": $0.type, "confirmed": $0.confirmed, "created": ConsoleTemplates.time($0.createdAt), "name": $0.name ?? "",
                    "passkey": $0.type == PasskeyFactor.factorID, "factorID": $0.id, "userID": id.uuidString.lowercased(), "csrf": csrf,
                ]
            },
            "hasFactors": !factors.factors.isEmpty, "recoveryCodesLeft": factors.recoveryCodesLeft,
            "sessions": sessions.map { session -> [String: Any] in
                [
                    "id": session.id.uuidString.lowercased(), "userID": id.uuidString.lowercased(), "client": session.clientID,
                    "amr": session.amr.joined(separator: ", "), "userAgent": session.userAgent ?? "",
                    "created": ConsoleTemplates.time(session.createdAt),
                    "lastUsed": ConsoleTemplates.time(session.lastUsedAt), "live": session.isLive(at: now),
                    "reason": session.revokeReason ?? (session.expiresAt <= now ? "expired" : ""), "csrf": csrf,
                ]
            },
            "hasSessions": !sessions.isEmpty,
        ].merging(Self.eventValues(events)) { $1 }
        return page("user", title: user.email ?? user.phone ?? "User", nav: "Users", context: context, request: request, values: values)
    }

    @Sendable func clientsPage(_ request: Request, context: AdminContext) async throws -> Response {
        let rows: [[String: Any]] = try await clients.list().map { client in
            [
                "id": client.id, "name": client.name, "kind": client.kind.rawValue, "scopes": client.scopes.joined(separator: " "),
                "redirects": client.redirectURIs.joined(separator: " "), "isDefault": client.isDefault,
                "created": ConsoleTemplates.time(client.createdAt),
            ]
        }
        return page("clients", title: "Clients", nav: "Clients", context: context, request: request, values: ["clients": rows])
    }

    @Sendable func keysPage(_ request: Request, context: AdminContext) async throws -> Response {
        let rows: [[String: Any]] = try await keys.list().map { key in
            [
                "kid": key.kid, "algorithm": key.algorithm, "current": key.retiredAt == nil,
                "retired": ConsoleTemplates.time(key.retiredAt),
                "created": ConsoleTemplates.time(key.createdAt), "until": ConsoleTemplates.time(key.publishUntil),
            ]
        }
        return page("keys", title: "Signing keys", nav: "Keys", context: context, request: request, values: ["keys": rows])
    }

    @Sendable func auditPage(_ request: Request, context: AdminContext) async throws -> Response {
        let fields = try request.queryFields()
        let type = (fields["type"] ?? "").trimmingCharacters(in: .whitespaces)
        let userText = (fields["user"] ?? "").trimmingCharacters(in: .whitespaces)
        guard type.count <= 100, userText.count <= 36 else { throw GatehouseError.badRequest("A filter is too long.") }
        var query = AuditQuery(limit: 200)
        query.newestFirst = true
        if !type.isEmpty { query.type = type }
        if !userText.isEmpty {
            guard let id = UUID(uuidString: userText) else { throw GatehouseError.badRequest("The user filter must be a user id.") }
            query.userID = id
        }
        // The newest 200, read as such (an index walk backwards); the admin API pages all of it.
        let values = Self.eventValues(try await audit.list(query)).merging(["type": type, "user": userText]) { $1 }
        return page("audit", title: "Audit log", nav: "Audit", context: context, request: request, values: values)
    }

    // MARK: Actions (POST, CSRF-checked, audited by the core as console:<name>)

    @Sendable func userAction(_ request: Request, context: AdminContext) async throws -> Response {
        let (_, fields) = try await checkedForm(request, context)
        let id = try context.pathID()
        let back = "/admin/console/users/\(id.uuidString.lowercased())"
        switch context.parameters.get("action") {
        case "disable": _ = try await users.setDisabled(id: id, true, actor: context.actor)
        case "enable": _ = try await users.setDisabled(id: id, false, actor: context.actor)
        case "sign-out": _ = try await users.signOut(id: id, actor: context.actor)
        case "password-reset": try await users.sendPasswordReset(id: id, clientID: nil, actor: context.actor)
        case "reset-factors":
            guard fields["confirm"] == "yes" else { throw GatehouseError.badRequest("Tick the box to confirm the reset.") }
            try requireFreshSignIn(context, for: "resetting second factors")
            _ = try await users.resetFactors(id: id, actor: context.actor)
        case "delete":
            guard fields["confirm"] == "yes" else { throw GatehouseError.badRequest("Tick the box to confirm the deletion.") }
            try requireFreshSignIn(context, for: "deleting an account")
            try await users.delete(id: id, actor: context.actor)
            return PageResponses.redirect(to: URL(string: "/admin/console/users?done=deleted")!)
        default: throw GatehouseError.notFound("No such action.")
        }
        return PageResponses.redirect(to: URL(string: back + "?done=" + (context.parameters.get("action") ?? ""))!)
    }

    @Sendable func revokeSession(_ request: Request, context: AdminContext) async throws -> Response {
        _ = try await checkedForm(request, context)
        let id = try context.pathID()
        let sessionID = try context.pathID("sid")
        guard try await users.sessions(id: id, limit: 1000).contains(where: { $0.id == sessionID }) else {
            throw GatehouseError.notFound("This user has no such session.")
        }
        try await users.revokeSession(id: sessionID, actor: context.actor)
        return PageResponses.redirect(to: URL(string: "/admin/console/users/\(id.uuidString.lowercased())?done=revoked")!)
    }

    /// Removes one passkey (lost, or suspect), as `DELETE /admin/v1/users/{id}/passkeys/{passkey_id}` does.
    @Sendable func removePasskey(_ request: Request, context: AdminContext) async throws -> Response {
        _ = try await checkedForm(request, context)
        let id = try context.pathID()
        guard let passkey = context.parameters.get("pid"), !passkey.isEmpty, passkey.count <= 64 else {
            throw GatehouseError.notFound("No such passkey.")
        }
        try await users.removePasskey(id: id, passkeyID: passkey, actor: context.actor)
        return PageResponses.redirect(to: URL(string: "/admin/console/users/\(id.uuidString.lowercased())?done=passkey-removed")!)
    }

    @Sendable func rotateKey(_ request: Request, context: AdminContext) async throws -> Response {
        _ = try await checkedForm(request, context)
        try requireFreshSignIn(context, for: "rotating the signing keys")
        _ = try await keys.rotate(actor: context.actor)
        return PageResponses.redirect(to: URL(string: "/admin/console/keys?done=rotated")!)
    }

    // MARK: Helpers

    /// Actions that weaken an account or end every signed-in user's tokens run only from a console
    /// session signed in within the last 15 minutes: a console left open (or its cookie stolen) for
    /// hours can still look, but not do these.
    private func requireFreshSignIn(_ context: AdminContext, for action: String) throws {
        guard let since = context.admin.signedInAt, clock.now().timeIntervalSince(since) <= FactorsFlow.recentSignIn else {
            throw GatehouseError.forbidden(
                "Sign in to the console again (a new link from the CLI): \(action) needs a sign-in from the last 15 minutes.")
        }
    }

    static let notices = [
        "revoked": "The session was revoked.", "disable": "The account is disabled and its sessions ended.",
        "enable": "The account is enabled.", "sign-out": "Every session of this account has ended.",
        "password-reset": "The password reset mail is on its way.",
        "reset-factors": "The second factors are removed and every session has ended; the user enrols again at the next sign-in that asks.",
        "deleted": "The account and everything kept for it are deleted.",
        "rotated": "A new signing key is current.",
        "passkey-removed": "The passkey is removed and the sessions it started have ended.",
    ]

    private func page(
        _ name: String, title: String, nav: String, context: AdminContext, request: Request, values: [String: Any]
    ) -> Response {
        // A malformed query shows no notice rather than failing the page.
        let notice = (try? request.queryFields())?["done"].flatMap { Self.notices[String($0)] }
        let html = templates.render(
            name, title: title, operatorName: context.admin.clientID, csrf: try? csrfToken(request), nav: nav, notice: notice,
            values: values)
        return PageResponses.html(html)
    }

    /// The session's CSRF token: a keyed hash of its cookie, so nothing is stored per form.
    private func csrfToken(_ request: Request) throws -> String {
        guard let cookie = Cookies(request)[ConsoleAuthenticator.cookie] else { throw GatehouseError.csrfMismatch }
        return secret.csrfToken(for: "console:" + cookie)
    }

    /// The form of a POST whose `csrf` field matches the session's; returns the session token too.
    private func checkedForm(_ request: Request, _ context: AdminContext) async throws -> (String, [String: String]) {
        let fields = try await RequestDecoding.formFields(from: request)
        guard let cookie = Cookies(request)[ConsoleAuthenticator.cookie], let sent = fields["csrf"],
            secret.csrfMatches(sent, for: "console:" + cookie)
        else { throw GatehouseError.csrfMismatch }
        return (cookie, fields)
    }

    static func eventValues(_ events: [AuditEvent]) -> [String: Any] {
        [
            "events": events.map { event -> [String: Any] in
                var row: [String: Any] = [
                    "at": ConsoleTemplates.time(event.at, seconds: true), "type": event.type, "client": event.clientID ?? "",
                    "method": event.method ?? "",
                    "reason": event.reason ?? "", "actor": event.actor ?? "",
                ]
                if let user = event.userID?.uuidString.lowercased() {
                    row["user"] = user
                    row["short"] = String(user.prefix(8))
                }
                return row
            },
            "hasEvents": !events.isEmpty,
        ]
    }

    static func json<T: Encodable>(_ value: T) -> String {
        (try? WireCoding.encoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
