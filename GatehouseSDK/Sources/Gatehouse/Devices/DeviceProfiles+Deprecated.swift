import Foundation
import GatehouseAPI

// The device sign-ins' names before every sign-in was `signIn…` and answered a `SignInResult`
// (issue #28). Each forwards to its new name and still returns the bare `User`, the result's `user`.
extension DeviceProfiles {
    /// The PIN sign-in's old name.
    @available(*, deprecated, renamed: "signIn(profile:pin:)", message: "Returns a SignInResult; its user is what this returned.")
    @discardableResult
    public func authenticate(profile: UserProfile, pin: String) async throws -> User {
        try await signIn(profile: profile, pin: pin).user
    }

    /// The biometric or custom sign-in's old name.
    @available(
        *, deprecated, renamed: "signIn(profile:authenticator:reason:)", message: "Returns a SignInResult; its user is what this returned."
    )
    @discardableResult
    public func authenticate(
        profile: UserProfile, authenticator: RegisteredAuthenticator? = nil, reason: String = "Sign in"
    ) async throws -> User {
        try await signIn(profile: profile, authenticator: authenticator, reason: reason).user
    }

    /// The delegate sign-in's old name.
    @available(
        *, deprecated, renamed: "signIn(profile:authenticator:delegate:)",
        message: "Returns a SignInResult; its user is what this returned."
    )
    @discardableResult
    public func authenticate(
        profile: UserProfile, authenticator: RegisteredAuthenticator, delegate: any AuthenticationDelegate
    ) async -> User? {
        await signIn(profile: profile, authenticator: authenticator, delegate: delegate)?.user
    }

    /// The profile sign-out's old name.
    @available(*, deprecated, renamed: "signOut()")
    @discardableResult
    public func logout() async -> LogoutOutcome {
        await signOut()
    }
}
