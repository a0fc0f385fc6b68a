import Foundation

/// A user, once an access token (or a browser session) has been checked against a live session.
public struct Principal: Sendable {
    public var claims: AccessTokenClaims
    public var session: SessionRecord
    public var user: UserRecord

    public init(claims: AccessTokenClaims, session: SessionRecord, user: UserRecord) {
        self.claims = claims
        self.session = session
        self.user = user
    }
}

/// An operator's machine credential: a confidential client's `client_credentials` token that carries
/// an admin scope. Never a user's session.
public struct AdminPrincipal: Sendable, Hashable {
    /// The confidential client's id, or the operator's name for a console session.
    public var clientID: String
    public var scopes: Set<String>
    /// Signed in to the admin console (by a one-time link from the CLI) rather than an API credential.
    public var isConsole: Bool
    /// When the console session was signed in (its one-time link used): how recent the operator's
    /// proof is, for the actions that weaken an account.
    public var signedInAt: Date?

    public init(clientID: String, scopes: Set<String>, isConsole: Bool = false, signedInAt: Date? = nil) {
        self.clientID = clientID
        self.scopes = scopes
        self.isConsole = isConsole
        self.signedInAt = signedInAt
    }

    /// Whether this credential may act with `scope` (`admin` allows everything).
    public func allows(_ scope: String) -> Bool { scopes.contains(AdminScope.all) || scopes.contains(scope) }

    /// Reading an area: `admin`, `admin:read` or the area's own scope.
    public func mayRead(_ area: String) -> Bool { allows(area) || scopes.contains(AdminScope.read) }

    /// Changing an area: `admin` or the area's own scope, never `admin:read`.
    public func mayWrite(_ area: String) -> Bool { allows(area) }
}

/// The scopes an admin credential may carry: everything, read-only everywhere, or one area (read
/// and write).
public enum AdminScope {
    public static let all = "admin"
    public static let read = "admin:read"
    public static let users = "admin:users"
    public static let clients = "admin:clients"
    public static let keys = "admin:keys"
    public static let audit = "admin:audit"

    public static let every: Set<String> = [all, read, users, clients, keys, audit]
}

/// Who a request comes from, as the first authenticator that recognised it says. Indirect: the
/// payloads are large records, and the request context that holds this is copied at every middleware.
public indirect enum Identity: Sendable {
    case user(Principal)
    case admin(AdminPrincipal)
    case browser(BrowserPrincipal)
}
