import Foundation
import GatehouseAPI

/// One way of signing in, as ``FlowRunner`` runs it: a password, a device key, a one-time code, a
/// verification or recovery link, a provider's identity. The runner owns the order and everything
/// every method shares (the client, the before-hook, the account's state, the client's rules, terms,
/// the session through ``SessionStarter``, the audit row, webhooks, the after-hook); a strategy owns
/// only what differs: what it counts, how it checks the submission, and how it finds, creates or
/// links the account.
///
/// The runner calls, in order: ``admit(_:client:meta:hooked:)``, the before-hook with
/// ``beforeHook(_:)``, ``prove(_:admitted:client:meta:)``, then, in the transaction that starts the
/// session, ``account(for:changes:client:now:stores:)``.
public protocol SignInStrategy: Sendable {
    associatedtype Submission: Sendable
    /// The bot challenge a client may ask for before this method (``BotChallenge``): a password
    /// sign-in is what credential-stuffing bots send; nil for the rest.
    var botChallenge: BotChallenge.Action? { get }
    /// What the strategy learned before the before-hook: what it counted, whose account the submission
    /// names when that is known without checking anything secret.
    associatedtype Admitted: Sendable
    /// What checking the submission proved.
    associatedtype Proof: Sendable

    /// Refuses malformed input, counts the attempt (a throttle or a rate limit) before anything is
    /// checked, and finds what the hook should know. `hooked`: whether any before-hook will read it, so
    /// a lookup only hooks need can be skipped.
    func admit(_ submission: Submission, client: ClientRecord, meta: RequestMeta, hooked: Bool) async throws -> Admitted

    /// What the before-hook is told: never a secret, nor a value derived from one.
    func beforeHook(_ admitted: Admitted) -> SignInHook

    /// The sign-in ended without a failed guess (a before-hook refused, or the account's state, the
    /// client's rules or a storage fault refused a right credential): what
    /// ``admit(_:client:meta:hooked:)`` counted is given back.
    func abandon(_ admitted: Admitted) async

    /// Checks the submission. A wrong one throws, the same way whether or not its account exists.
    func prove(_ submission: Submission, admitted: Admitted, client: ClientRecord, meta: RequestMeta) async throws -> Proof

    /// Finds, creates or links the account the proof names, in the transaction that starts the session.
    /// `changes`: what the before-hook asked to store (a new account's profile).
    func account(
        for proof: Proof, changes: HookChanges, client: ClientRecord, now: Date, stores: any Stores
    ) async throws -> AccountMatch

    /// Runs `body` (from ``admit(_:client:meta:hooked:)`` to ``prove(_:admitted:client:meta:)``) holding
    /// what the check will need, taken first: a sign-in without it is refused before anything is
    /// counted. Defaults to running `body` as it is.
    func holdingCapacity<T: Sendable>(_ body: () async throws -> T) async throws -> T
}

extension SignInStrategy {
    public func abandon(_ admitted: Admitted) async {}
    public func holdingCapacity<T: Sendable>(_ body: () async throws -> T) async throws -> T { try await body() }
    public var botChallenge: BotChallenge.Action? { nil }
}

/// What the before-hook of a sign-in is told.
public struct SignInHook: Sendable {
    public var point: HookPoint
    public var method: String
    public var identifier: String?
    public var userID: UUID?
    /// A new account's profile, as the caller sent it (the hook may change it).
    public var profile: Profile?
    public var customData: String?

    public init(
        point: HookPoint, method: String, identifier: String?, userID: UUID?, profile: Profile? = nil, customData: String? = nil
    ) {
        self.point = point
        self.method = method
        self.identifier = identifier
        self.userID = userID
        self.profile = profile
        self.customData = customData
    }
}

/// The account a sign-in proved, and what it is worth: the strategy's answer to the runner.
public struct AccountMatch: Sendable {
    public var user: UserRecord
    public var amr: [String]
    /// The sign-in made the account (or is its first, for an account that had to verify first).
    public var isNew: Bool
    public var credentialID: String?
    /// The sign-in proved the identifier itself (a code sent to it, a provider's verified claim): a
    /// client that requires a verified email accepts it even if the account had not proved it before.
    public var provesIdentifier: Bool
    /// The after-point the sign-in reports (its audit row, its webhook, the after-hook).
    public var point: HookPoint
    public var method: String
    public var identifier: String?
    /// Whether the event is recorded even when no session starts yet (the account was made, an address
    /// was proved): what happened stands while a second factor is awaited.
    public var standsAlone: Bool
    /// The throttle's count of this attempt, given back when the sign-in's transaction is about to
    /// commit (``FlowRunner``), not when the account is found: the counters are shared by every
    /// sign-in from the address, and PostgreSQL keeps them locked until the commit.
    public var attempt: LoginAttempt?

    public init(
        user: UserRecord, amr: [String], isNew: Bool = false, credentialID: String? = nil, provesIdentifier: Bool,
        point: HookPoint, method: String, identifier: String?, standsAlone: Bool = false
    ) {
        self.user = user
        self.amr = amr
        self.isNew = isNew
        self.credentialID = credentialID
        self.provesIdentifier = provesIdentifier
        self.point = point
        self.method = method
        self.identifier = identifier
        self.standsAlone = standsAlone
    }
}
