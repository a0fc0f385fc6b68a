import Foundation

/// How recent a sign-in must be for a change that adds or removes a way in (a factor, a passkey): a
/// token stolen earlier, or a device left signed in, cannot make one.
public enum RecentSignIn {
    public static let window: TimeInterval = 15 * 60
}
