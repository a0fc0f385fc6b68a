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
