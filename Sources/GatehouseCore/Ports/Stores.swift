import Foundation

/// All stores, bound to one database session (and transaction, when inside one).
public protocol Stores: Sendable {
    var users: any UserStore { get }
    var directory: any UserDirectoryStore { get }
    var credentials: any CredentialStore { get }
    var clients: any ClientStore { get }
    var sessions: any SessionStore { get }
    var refreshTokens: any RefreshTokenStore { get }
    var signingKeys: any SigningKeyStore { get }
    var attempts: any AttemptStore { get }
    var proofs: any ProofReplayStore { get }
    var devices: any DeviceAuthorizationStore { get }
    var codes: any OneTimeCodeStore { get }
    var outbox: any OutboxStore { get }
    var agreements: any AgreementStore { get }
    var flows: any FlowStore { get }
    var browserSessions: any BrowserSessionStore { get }
    var consents: any ConsentStore { get }
    var housekeeping: any HousekeepingStore { get }
    var audit: any AuditStore { get }
    var console: any ConsoleSessionStore { get }
    var activity: any ActivityStore { get }
}
