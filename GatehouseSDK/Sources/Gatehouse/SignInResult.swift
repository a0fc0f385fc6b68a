import GatehouseAPI

/// What every sign-in gives, whichever way the user signed in: a password, a one-time code, a
/// verification or recovery code, a provider's token, the browser (a provider's page or
/// Gatehouse's hosted page), an authorization code, or a device authenticator.
///
/// One type, so an app handles "signed in" once: ``isNew`` decides between first-run screens and the
/// home screen on every path, and ``session`` saves a second look at ``AuthClient/session``.
public struct SignInResult: Sendable, Hashable {
    /// The signed-in user, as the sign-in's answer had it.
    public var user: User
    /// Whether this sign-in created the account (Backbeam's `isNew`), as the server's token response
    /// said (`is_new`): only the server knows, so the SDK never decides it. An answer without
    /// `is_new` (a server from before it) reads as `false`.
    public var isNew: Bool
    /// The session the sign-in started, as ``AuthClient/session`` shows it right after: an app that
    /// needs the granted scopes or the ID token of this very sign-in reads them here, without a race
    /// against a later sign-in or refresh.
    public var session: Session
    /// The recovery codes of the authenticator app enrolled in this sign-in (a client that requires a
    /// second factor, for a user who had none): shown here once. Show them and ask the user to keep them.
    public var recoveryCodes: [String]?

    /// For tests and previews of an app's own code; the SDK makes its results itself.
    public init(user: User, isNew: Bool, session: Session, recoveryCodes: [String]? = nil) {
        self.user = user
        self.isNew = isNew
        self.session = session
        self.recoveryCodes = recoveryCodes
    }

    /// A sign-in's result from the session it stored and the token response it came from.
    init(_ stored: StoredSession, tokens: TokenResponse) {
        self.init(user: stored.user, isNew: tokens.isNew ?? false, session: Session(stored), recoveryCodes: tokens.recoveryCodes)
    }
}
