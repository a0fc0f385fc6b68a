import Foundation

/// How strongly a sign-in proved who the user is. The gate in ``SessionStarter`` compares it with what
/// the client, the user's enrolled factors and the request require.
public enum AssuranceLevel: Int, Sendable, Codable, Comparable, CustomStringConvertible {
    /// One factor: a password, a code to an address, a provider's word, a device key.
    case firstFactor = 1
    /// A second, independent factor completed after the first (`amr` carries `mfa`).
    case multiFactor = 2

    /// The level an `amr` list records. Derived rather than stored so a browser session, an
    /// authorization code and an app session started from them can never disagree about it.
    public init(amr: [String]) {
        self = amr.contains(AuthenticationMethod.multiFactor) ? .multiFactor : .firstFactor
    }

    public static func < (lhs: AssuranceLevel, rhs: AssuranceLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }
}
