import Foundation

/// A finished sign-in, whatever the method: what it started, for whom (as the answer should show
/// them), through which client, and whether it made the account.
public struct SignedIn: Sendable {
    public var started: StartedSession
    public var user: UserRecord
    public var client: ClientRecord
    public var isNew: Bool

    public init(started: StartedSession, user: UserRecord, client: ClientRecord, isNew: Bool) {
        self.started = started
        self.user = user
        self.client = client
        self.isNew = isNew
    }
}
