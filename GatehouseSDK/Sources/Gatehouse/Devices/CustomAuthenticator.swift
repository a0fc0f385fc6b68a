import Foundation
import GatehouseAPI

/// An app-defined authenticator (a hardware token, a server-side check of the app's own): the SDK
/// keeps a device key for it and signs the server's challenge; the authenticator decides whether the
/// user passed and may send extra data that the operator's hook checks on the server.
public protocol CustomAuthenticator: Sendable {
    /// The type registered with the server (`[a-z0-9_-]`, at most 64).
    var type: String { get }
    /// Runs the app's own check for one sign-in. Return the extra data for the server's hook (or nil),
    /// or throw ``DeviceAuthenticationError/cancelled`` to stop.
    func authenticate(_ challenge: CustomChallenge) async throws -> String?
}

/// What a custom authenticator is asked to answer.
public struct CustomChallenge: Sendable, Hashable {
    public var profile: UserProfile
    public var authenticator: RegisteredAuthenticator
    /// The server's counts for this authenticator.
    public var counts: FailureCounts
}
