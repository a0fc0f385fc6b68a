import Foundation
import GatehouseCore
import Synchronization

/// The state behind one view (committed, or a transaction's working copy).
final class StateBox: Sendable {
    private let state: Mutex<InMemoryState>

    init(_ state: InMemoryState) { self.state = Mutex(state) }

    func snapshot() -> InMemoryState { state.withLock { $0 } }
    func replace(with value: InMemoryState) { state.withLock { $0 = value } }
    func with<R>(_ body: (inout InMemoryState) throws -> R) rethrows -> R { try state.withLock { try body(&$0) } }
}

/// A FIFO lock that suspends instead of blocking a thread. Written here because no listed package
/// offers an async mutex.
actor AsyncLock {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        guard locked else {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func unlock() {
        if waiters.isEmpty {
            locked = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}

/// Every table, as values.
struct InMemoryState: Sendable {
    var users: [UUID: UserRecord] = [:]
    var credentials: [String: CredentialRecord] = [:]
    /// `type + "\u{0}" + identifier` → credential id: the uniqueness the SQL primary key enforces.
    var identifiers: [String: String] = [:]
    var clients: [String: ClientRecord] = [:]
    var sessions: [UUID: SessionRecord] = [:]
    var refreshTokens: [String: RefreshTokenRecord] = [:]
    var signingKeys: [String: SigningKeyRecord] = [:]
    var attempts: [String: AttemptCount] = [:]
    /// DPoP proof keys and when they may be forgotten.
    var proofs: [String: Date] = [:]
    var deviceAuthorizations: [String: DeviceAuthorizationRecord] = [:]
    var codes: [UUID: OneTimeCodeRecord] = [:]
    var outbox: [UUID: OutboxMessage] = [:]
    var audit: [AuditEvent] = []
    var agreements: [String: AgreementRecord] = [:]
    var consents: [String: ConsentRecord] = [:]
    var flows: [UUID: FlowRecord] = [:]
    var browserSessions: [UUID: BrowserSessionRecord] = [:]
    var console: [UUID: ConsoleSessionRecord] = [:]

    static func identifierKey(_ type: CredentialType, _ identifier: String) -> String { type.rawValue + "\u{0}" + identifier }

    func withPasswordFlag(_ user: UserRecord) -> UserRecord {
        var user = user
        user.hasPassword = credentials.values.contains { $0.userID == user.id && $0.type == .password }
        user.hasIdentities = credentials.values.contains { $0.userID == user.id && $0.type == .oidc }
        return user
    }
}

/// What the SQL databases refuse by constraint and the in-memory stores refuse by hand.
enum InMemoryStoreError: Error {
    case unknownUser(UUID)
}
