import GatehouseCore
import SQLKit

/// Every store, bound to one database session.
struct SQLStores: Stores {
    let db: any SQLDatabase
    let dialect: Dialect

    var users: any UserStore { SQLUserStore(db: db) }
    var directory: any UserDirectoryStore { SQLUserDirectoryStore(db: db) }
    var credentials: any CredentialStore { SQLCredentialStore(db: db) }
    var clients: any ClientStore { SQLClientStore(db: db) }
    var sessions: any SessionStore { SQLSessionStore(db: db) }
    var refreshTokens: any RefreshTokenStore { SQLRefreshTokenStore(db: db) }
    var signingKeys: any SigningKeyStore { SQLSigningKeyStore(db: db) }
    var attempts: any AttemptStore { SQLAttemptStore(db: db) }
    var proofs: any ProofReplayStore { SQLProofReplayStore(db: db) }
    var devices: any DeviceAuthorizationStore { SQLDeviceAuthorizationStore(db: db) }
    var codes: any OneTimeCodeStore { SQLOneTimeCodeStore(db: db) }
    var outbox: any OutboxStore { SQLOutboxStore(db: db, dialect: dialect) }
    var audit: any AuditStore { SQLAuditStore(db: db) }
    var console: any ConsoleSessionStore { SQLConsoleSessionStore(db: db) }
    var activity: any ActivityStore { SQLActivityStore(db: db) }
    var agreements: any AgreementStore { SQLAgreementStore(db: db) }
    var flows: any FlowStore { SQLFlowStore(db: db) }
    var browserSessions: any BrowserSessionStore { SQLBrowserSessionStore(db: db) }
    var consents: any ConsentStore { SQLConsentStore(db: db) }
    var housekeeping: any HousekeepingStore { SQLHousekeepingStore(db: db) }
}
