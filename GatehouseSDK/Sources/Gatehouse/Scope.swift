/// One OAuth scope value, such as `openid` or `offline_access`.
///
/// Calls that ask for scopes take a `Set<Scope>`, and ``Session/scopes`` is one: the wire format's
/// space-separated string (RFC 6749 §3.3) stays inside the SDK.
public struct Scope: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
    public static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rawValue < rhs.rawValue }

    /// OpenID Connect: the answer carries an ID token (``Session/idToken``).
    public static let openid: Scope = "openid"
    public static let profile: Scope = "profile"
    public static let email: Scope = "email"
    public static let phone: Scope = "phone"
    /// A refresh token, so the session outlives its access token.
    public static let offlineAccess: Scope = "offline_access"
}

extension Set where Element == Scope {
    /// The scopes of a space-separated `scope` value; an absent or empty one is the empty set.
    public init(wireValue: String?) {
        self = Set((wireValue ?? "").split(separator: " ").map { Scope(String($0)) })
    }

    /// The space-separated `scope` value, sorted so equal sets always read the same; `nil` when empty,
    /// which asks for the client's default scopes.
    public var wireValue: String? {
        isEmpty ? nil : sorted().map(\.rawValue).joined(separator: " ")
    }
}
