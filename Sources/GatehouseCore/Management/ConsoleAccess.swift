import Foundation
import GatehouseAPI

/// The admin console's sign-in: `gatehouse console link` (on the server's machine, so whoever runs it
/// already holds the database) makes a one-time link; opening it starts a console session that acts
/// with the `admin` scope. Tokens are random, stored as hashes, compared by hash lookup.
public struct ConsoleAccess: Sendable {
    let persistence: any Persistence
    let clock: any WallClock

    public static let linkLifetime: TimeInterval = 10 * 60
    public static let sessionLifetime: TimeInterval = 8 * 3600

    public init(persistence: any Persistence, clock: any WallClock) {
        self.persistence = persistence
        self.clock = clock
    }

    /// A one-time sign-in token for `operatorName`, good for ten minutes. Audited as
    /// `admin.console.link_issued` by `actor`.
    public func issueLink(operatorName: String, actor: AdminActor = .commandLine) async throws -> String {
        guard Self.isValidName(operatorName) else {
            throw GatehouseError.badRequest("An operator name is 1–64 letters, digits, '.', '_', '-' or '@'.")
        }
        let token = Secrets.token(prefix: "gh_cl_")
        let now = clock.now()
        let record = ConsoleSessionRecord(
            tokenHash: Secrets.sha256Hex(token), kind: .link, operatorName: operatorName, createdAt: now,
            expiresAt: now.addingTimeInterval(Self.linkLifetime))
        try await persistence.transaction { stores in
            try await stores.console.insert(record)
            try await stores.audit.append(actor.event("console.link_issued", at: now, reason: operatorName))
        }
        return token
    }

    /// Spends the link and opens a console session; returns the session's token. A spent, expired or
    /// unknown link opens nothing.
    public func enter(linkToken: String, meta: RequestMeta) async throws -> (token: String, session: ConsoleSessionRecord) {
        let now = clock.now()
        let token = Secrets.token(prefix: "gh_cs_")
        let session = try await persistence.transaction { stores -> ConsoleSessionRecord in
            guard let link = try await stores.console.consume(tokenHash: Secrets.sha256Hex(linkToken), kind: .link, at: now) else {
                throw GatehouseError.unauthorized(
                    "This sign-in link is used, expired or unknown. Ask for a new one with gatehouse console link.", code: .invalidToken)
            }
            let session = ConsoleSessionRecord(
                tokenHash: Secrets.sha256Hex(token), kind: .session, operatorName: link.operatorName, createdAt: now,
                expiresAt: now.addingTimeInterval(Self.sessionLifetime))
            try await stores.console.insert(session)
            let actor = AdminActor(name: "console:" + link.operatorName, meta: meta)
            try await stores.audit.append(actor.event("console.signed_in", at: now))
            return session
        }
        return (token, session)
    }

    /// The live session a cookie names, as an admin principal with every scope.
    public func principal(sessionToken: String) async throws -> AdminPrincipal? {
        guard sessionToken.hasPrefix("gh_cs_"), sessionToken.utf8.count <= 100 else { return nil }
        let now = clock.now()
        guard
            let session = try await persistence.read({ try await $0.console.findLive(tokenHash: Secrets.sha256Hex(sessionToken), at: now) })
        else { return nil }
        return AdminPrincipal(clientID: session.operatorName, scopes: [AdminScope.all], isConsole: true, signedInAt: session.createdAt)
    }

    /// Ends the session (the console's sign-out).
    public func signOut(sessionToken: String, meta: RequestMeta) async throws {
        let now = clock.now()
        try await persistence.transaction { stores in
            guard let session = try await stores.console.consume(tokenHash: Secrets.sha256Hex(sessionToken), kind: .session, at: now) else {
                return
            }
            try await stores.audit.append(
                AdminActor(name: "console:" + session.operatorName, meta: meta).event("console.signed_out", at: now))
        }
    }

    public func activity(days: Int) async throws -> DailyActivity {
        let since = Date(timeIntervalSince1970: Double((Int(clock.now().timeIntervalSince1970) / 86400 - days + 1) * 86400))
        return try await persistence.read { try await $0.activity.daily(since: since) }
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count) && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-@".contains($0)) }
    }
}
