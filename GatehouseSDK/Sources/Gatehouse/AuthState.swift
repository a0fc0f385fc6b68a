import GatehouseAPI

/// Where the app's authentication stands.
///
/// There is no misleading `nil` while a stored session is being read at launch: that moment is
/// ``restoring``.
public enum AuthState: Sendable, Equatable {
    /// A stored session is being read and checked.
    case restoring
    /// Nobody is signed in.
    case signedOut
    /// A user is signed in.
    case signedIn(User)
}

/// Why a session ended.
public enum SignOutReason: String, Sendable, Equatable {
    /// The app called ``AuthClient/signOut(scope:)``.
    case userRequested
    /// The server no longer accepts the session (revoked elsewhere, refresh token reused, expired).
    case sessionRevoked
}

/// What happened to authentication. The first element of ``AuthClient/events()`` is always
/// ``current(_:)``.
public enum AuthEvent: Sendable, Equatable {
    /// The state at the moment the stream was opened.
    case current(AuthState)
    case signedIn(User)
    /// The access token was renewed; nothing the app must do.
    case tokenRefreshed
    case userUpdated(User)
    case signedOut(SignOutReason)
    /// A sign-in's first factor was right and it waits for a second: the same challenge the call
    /// throws (``GatehouseError/secondFactor``), for an app that drives its screens from the events.
    /// Nothing is signed in until ``AuthClient/signIn(secondFactor:code:challenge:persist:)`` answers it.
    case secondFactorRequired(SecondFactorChallenge)
}

/// The delegate view of ``AuthEvent``, for apps that prefer it. Held weakly.
///
/// The client awaits the delegate before the call that caused the event returns, and a
/// ``AuthEvent/tokenRefreshed`` is delivered while the refresh still holds the store's lock: a
/// delegate that awaits a call that saves the session there (``AuthClient/refreshSession()``,
/// ``AuthClient/updateProfile(_:)``, ``AuthClient/refreshUser()``) waits for itself. Start a `Task`
/// for such calls instead.
public protocol AuthClientDelegate: AnyObject, Sendable {
    func authClient(_ client: AuthClient, didReceive event: AuthEvent) async
}

/// How a sign-out went (``AuthClient/signOut(scope:)``, ``DeviceProfiles/signOut()``).
public enum LogoutOutcome: Sendable {
    /// The server revoked the session (or already had).
    case revoked
    /// The server could not be reached or refused: the session was forgotten here only, and stays
    /// valid on the server until it expires or is revoked from another device.
    case localOnly(GatehouseError)
    /// Nobody was signed in.
    case notSignedIn

    /// Whether the server ended the session.
    public var isRevoked: Bool {
        if case .revoked = self { return true }
        return false
    }
}
