import Foundation

/// The work of one credential type (password, federated identity, device authenticator, …): how a
/// submission names its credential, how it is checked, what it is worth (`amr`). Flows never switch on
/// credential types; they hand a strategy and its submission to ``FlowRunner/signIn(with:submission:request:)``.
/// A new type needs a strategy and nothing else: no flow changes.
public protocol CredentialStrategy: Sendable {
    /// What the caller presents: a password, a signature over a challenge, a provider's token.
    associatedtype Submission: Sendable

    var type: CredentialType { get }
    /// What a session started with this credential reports in `amr`.
    var amr: [String] { get }
    /// Whether a sign-in proves the identifier itself (a code sent to it, a provider's verified
    /// claim). A password does not, so clients that require a verified email refuse it until then.
    var provesIdentifier: Bool { get }

    /// The normalized identifier the submission names (the credential's lookup key). Throws
    /// ``GatehouseError/invalidCredentials`` for shapes that can never match, before any lookup.
    func identifier(of submission: Submission) throws -> String

    /// The identifier as hooks, the log and the audit log may show it, or nil when the identifier is
    /// derived from a key or a secret (a device key's id: with a stolen device store, even its hash
    /// would let PIN guesses be tested offline). Defaults to ``identifier(of:)``.
    func shownIdentifier(of submission: Submission) -> String?

    /// Checks the submission against the stored credential.
    func verify(_ submission: Submission, against credential: CredentialRecord) async throws -> CredentialVerification

    /// The same work as ``verify(_:against:)`` when no credential answers to the identifier, so a caller
    /// cannot tell an unknown account from a wrong secret by time.
    func verifyUnknown(_ submission: Submission) async throws

    /// What a session started with this credential reports in `amr`, when it depends on the credential
    /// (a device authenticator's PIN or biometric). Defaults to ``amr``.
    func amr(for credential: CredentialRecord) -> [String]

    /// The number of failures after which the credential is deleted, or nil when only the account-wide
    /// throttle applies. With a limit, every attempt is counted before it is checked (count, then
    /// compare), so concurrent guesses can never exceed it.
    func failureLimit(for credential: CredentialRecord, client: ClientRecord) -> Int?

    /// Whether sign-ins go through the account-and-address throttle. A strategy whose credentials have
    /// a stricter limit of their own (a device authenticator's three tries) may leave it out.
    var usesSignInThrottle: Bool { get }

    /// Runs a whole sign-in with this strategy holding the capacity its check needs, taken first (a
    /// password holds its place in the hashing queue): a sign-in the server has no room for is refused
    /// before anything is counted or read. Defaults to running `body` as it is.
    func holdingCapacity<T: Sendable>(_ body: () async throws -> T) async throws -> T
}

extension CredentialStrategy {
    public func shownIdentifier(of submission: Submission) -> String? { try? identifier(of: submission) }
    public func amr(for credential: CredentialRecord) -> [String] { amr }
    public func failureLimit(for credential: CredentialRecord, client: ClientRecord) -> Int? { nil }
    public var usesSignInThrottle: Bool { true }
    public func holdingCapacity<T: Sendable>(_ body: () async throws -> T) async throws -> T { try await body() }
}

/// What checking a submission found.
public enum CredentialVerification: Sendable, Equatable {
    /// Correct. `upgradedConfig` replaces the stored config when the strategy wants it upgraded (a
    /// password hashed with older parameters).
    case verified(upgradedConfig: String?)
    case rejected
    /// Refused, and the credential is marked: `config` replaces the stored one (a passkey whose
    /// signature counter went backwards, a sign of a cloned authenticator).
    case flagged(config: String)
}
