import Foundation
import GatehouseAPI

/// A PIN challenge: the counts the server keeps for this authenticator and, after a wrong PIN, that
/// error. Show the remaining count; after the last wrong PIN the authenticator is deleted on the server.
public struct PINChallenge: Sendable {
    public var profile: UserProfile
    public var authenticator: RegisteredAuthenticator
    public var maxFailureCount: Int
    public var previousFailureCount: Int
    public var remainingFailureCount: Int
    /// Why the previous PIN was refused, on every challenge after the first.
    public var previousError: GatehouseError?
}

/// What the app answers to a PIN challenge.
public enum PINChallengeResponse: Sendable, Equatable {
    case pin(String)
    case cancel
}

/// The Onegini-style view of ``DeviceProfiles/signIn(profile:authenticator:delegate:)``: the SDK
/// asks the app for what it needs, step by step. Every method has a default, so an app implements only
/// what its authenticators use.
public protocol AuthenticationDelegate: Sendable {
    func didStartAuthentication(profile: UserProfile, authenticator: RegisteredAuthenticator) async
    /// Ask the user for the PIN (again after a wrong one, with the counts).
    func didReceivePINChallenge(_ challenge: PINChallenge) async -> PINChallengeResponse
    /// The reason shown in the biometric prompt; return nil to cancel.
    func didReceiveBiometricChallenge(profile: UserProfile, authenticator: RegisteredAuthenticator) async -> String?
    /// Before a custom authenticator runs (the seed's "custom auth finish authentication" challenge),
    /// with the server's counts for the challenge it is about to answer; return false to cancel.
    func didReceiveCustomChallenge(_ challenge: CustomChallenge) async -> Bool
    func didAuthenticate(user: User, profile: UserProfile) async
    /// Authentication ended without a user: cancelled, deregistered, or a server or network error.
    func didFailToAuthenticate(profile: UserProfile, error: any Error) async
}

extension AuthenticationDelegate {
    public func didStartAuthentication(profile: UserProfile, authenticator: RegisteredAuthenticator) async {}
    public func didReceivePINChallenge(_ challenge: PINChallenge) async -> PINChallengeResponse { .cancel }
    public func didReceiveBiometricChallenge(profile: UserProfile, authenticator: RegisteredAuthenticator) async -> String? {
        "Sign in"
    }
    public func didReceiveCustomChallenge(_ challenge: CustomChallenge) async -> Bool { true }
    public func didAuthenticate(user: User, profile: UserProfile) async {}
    public func didFailToAuthenticate(profile: UserProfile, error: any Error) async {}
}
