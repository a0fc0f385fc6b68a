import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore
import GatehouseTesting
import Logging
import Testing

/// The contract every database must keep, written once and run on SQLite always and on PostgreSQL
/// when `GATEHOUSE_TEST_POSTGRES_URL` is set.
@Suite("Persistence contract")
struct PersistenceContractTests {
    static func withPersistence(_ database: TestDatabase, _ body: (SQLPersistence) async throws -> Void) async throws {
        let (url, cleanup) = try await database.make()
        var logger = Logger(label: "contract")
        logger.logLevel = .critical
        let persistence = try await HangWatch.track("open a \(database) persistence") {
            try await SQLPersistence.open(try DatabaseURL(url), logger: logger)
        }
        do {
            try await HangWatch.track("persistence test body") { try await body(persistence) }
        } catch {
            await persistence.shutdown()
            await cleanup()
            throw error
        }
        await persistence.shutdown()
        // Opening again re-runs the migrator: it must find nothing to do.
        let reopened = try await SQLPersistence.open(try DatabaseURL(url), logger: logger)
        try await reopened.ping()
        await reopened.shutdown()
        await cleanup()
    }

    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func user(_ email: String) -> UserRecord {
        UserRecord(email: email, profile: Profile(givenName: "Ada", metadata: ["n": .number(1)]), createdAt: t0)
    }

    @Test("Users and credentials: insert, find, uniqueness, update", arguments: TestDatabase.available)
    func users(database: TestDatabase) async throws {
        try await Self.withPersistence(database) { db in
            let ada = Self.user("ada@example.com")
            try await db.transaction { try await $0.users.insert(ada) }
            await #expect(throws: StoreError.conflict("user")) {
                try await db.transaction { try await $0.users.insert(Self.user("ada@example.com")) }
            }
            var found = try #require(try await db.read { try await $0.users.find(email: "ada@example.com") })
            #expect(found.id == ada.id && found.profile == ada.profile && found.createdAt == ada.createdAt && !found.hasPassword)
            let credential = CredentialRecord(
                userID: ada.id, type: .password, identifiers: ["ada@example.com"], config: #"{"hashed_password":"$argon2id$one"}"#,
                createdAt: Self.t0)
            try await db.transaction { try await $0.credentials.insert(credential) }
            var stored = try #require(try await db.read { try await $0.credentials.find(type: .password, identifier: "ada@example.com") })
            #expect(stored == credential)
            stored.config = #"{"hashed_password":"$argon2id$two"}"#
            stored.configVersion = 2
            let replacement = stored
            try await db.transaction { try await $0.credentials.update(replacement) }
            #expect(try await db.read { try await $0.credentials.find(id: credential.id) }?.config.contains("two") == true)
            found.emailVerified = true
            found.profile.familyName = "Lovelace"
            let toSave = found
            try await db.transaction { try await $0.users.update(toSave) }
            let updated = try #require(try await db.read { try await $0.users.find(id: ada.id) })
            #expect(updated.emailVerified && updated.profile.familyName == "Lovelace" && updated.hasPassword)
            #expect(try await db.read { try await $0.users.count() } == 1)
            let value1 = try await db.read { try await $0.users.find(email: "nobody@example.com") }
            #expect(value1 == nil)
        }
    }

    @Test("A transaction that throws leaves nothing behind", arguments: TestDatabase.available)
    func rollback(database: TestDatabase) async throws {
        struct Boom: Error {}
        try await Self.withPersistence(database) { db in
            await #expect(throws: Boom.self) {
                try await db.transaction { stores in
                    try await stores.users.insert(Self.user("rolled@example.com"))
                    throw Boom()
                }
            }
            let value2 = try await db.read { try await $0.users.find(email: "rolled@example.com") }
            #expect(value2 == nil)
        }
    }

    @Test("Clients: default, list, update, delete", arguments: TestDatabase.available)
    func clients(database: TestDatabase) async throws {
        try await Self.withPersistence(database) { db in
            var settings = ClientSettings()
            settings.emailVerification = .off
            let app = ClientRecord(
                id: "app", name: "App", kind: .public, redirectURIs: ["com.example.app:/cb"], settings: settings, isDefault: true,
                createdAt: Self.t0)
            try await db.transaction { try await $0.clients.insert(app) }
            await #expect(throws: StoreError.conflict("client")) { try await db.transaction { try await $0.clients.insert(app) } }
            #expect(try await db.read { try await $0.clients.findDefault() } == app)
            var changed = app
            changed.settings.identifierStatus = .on
            let toSave = changed
            try await db.transaction { try await $0.clients.update(toSave) }
            #expect(try await db.read { try await $0.clients.find(id: "app") }?.settings.identifierStatus == .on)
            #expect(try await db.read { try await $0.clients.list() }.map(\.id) == ["app"])
            #expect(try await db.transaction { try await $0.clients.delete(id: "app") })
            #expect(try await !db.transaction { try await $0.clients.delete(id: "app") })
        }
    }

    @Test("Sessions and refresh tokens: one rotation claim, revocation", arguments: TestDatabase.available)
    func sessions(database: TestDatabase) async throws {
        try await Self.withPersistence(database) { db in
            let ada = Self.user("ada@example.com")
            let s1 = SessionRecord(
                userID: ada.id, clientID: "app", amr: ["pwd"], scopes: ["email"], userAgent: "ua", ipAddress: "127.0.0.1",
                createdAt: Self.t0, expiresAt: Self.t0 + 3600)
            let s2 = SessionRecord(
                userID: ada.id, clientID: "app", amr: ["otp"], scopes: [], userAgent: nil, ipAddress: nil, createdAt: Self.t0 + 1,
                expiresAt: Self.t0 + 3600)
            let token = RefreshTokenRecord(tokenHash: "h1", sessionID: s1.id, parentHash: nil, createdAt: Self.t0, expiresAt: Self.t0 + 60)
            try await db.transaction { stores in
                try await stores.users.insert(ada)
                try await stores.sessions.insert(s1)
                try await stores.sessions.insert(s2)
                try await stores.refreshTokens.insert(token)
            }
            #expect(try await db.read { try await $0.sessions.find(id: s1.id) } == s1)
            #expect(try await db.read { try await $0.refreshTokens.find(hash: "h1") } == token)
            #expect(try await db.read { try await $0.refreshTokens.findWithSession(hash: "h1") }?.token.rotatedAt == nil)
            // Twenty racing rotations, each with its own successor (and one repeating another's hash):
            // exactly one wins, and the parent's rotation time is the winner's creation.
            let claims = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<20 {
                    let successor = RefreshTokenRecord(
                        tokenHash: i == 19 ? "c0" : "c\(i)", sessionID: s1.id, parentHash: "h1", createdAt: Self.t0 + 5,
                        expiresAt: Self.t0 + 60)
                    group.addTask { try await db.transaction { try await $0.refreshTokens.insertSuccessor(successor) } }
                }
                var won = 0
                for try await claimed in group where claimed { won += 1 }
                return won
            }
            #expect(claims == 1)
            #expect(try await db.read { try await $0.refreshTokens.find(hash: "h1") }?.rotatedAt == Self.t0 + 5)
            let joined = try #require(try await db.read { try await $0.refreshTokens.findWithSession(hash: "h1") })
            #expect(joined.token.rotatedAt == Self.t0 + 5 && joined.session == s1 && joined.userActive)
            // The session was last used when its newest token was made.
            #expect(
                try await db.read { try await $0.sessions.listLive(userID: ada.id, now: Self.t0 + 2) }.first { $0.id == s1.id }?.lastUsedAt
                    == Self.t0 + 5)
            #expect(try await db.read { try await $0.sessions.listLive(userID: ada.id, now: Self.t0 + 2) }.map(\.id) == [s2.id, s1.id])
            #expect(try await db.transaction { try await $0.sessions.revoke(id: s1.id, at: Self.t0 + 10, reason: .logout) })
            #expect(try await !db.transaction { try await $0.sessions.revoke(id: s1.id, at: Self.t0 + 11, reason: .logout) })
            #expect(try await db.read { try await $0.sessions.find(id: s1.id) }?.revokeReason == "logout")
            #expect(
                try await db.transaction {
                    try await $0.sessions.revokeAll(userID: ada.id, except: nil, at: Self.t0 + 12, reason: .logoutGlobal)
                } == 1)
            #expect(try await db.read { try await $0.sessions.listLive(userID: ada.id, now: Self.t0 + 13) }.isEmpty)
        }
    }

    @Test("Attempt counters count in a window and reset", arguments: TestDatabase.available)
    func attempts(database: TestDatabase) async throws {
        try await Self.withPersistence(database) { db in
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await db.transaction { try await $0.attempts.recordFailure(key: "k", now: Self.t0, window: 60) }.count
                    }
                }
                var all: [Int] = []
                for try await c in group { all.append(c) }
                return all
            }
            #expect(counts.sorted() == Array(1...10))
            #expect(try await db.read { try await $0.attempts.current(key: "k", now: Self.t0 + 30, window: 60) }.count == 10)
            #expect(try await db.read { try await $0.attempts.current(key: "k", now: Self.t0 + 61, window: 60) }.count == 0)
            #expect(try await db.transaction { try await $0.attempts.recordFailure(key: "k", now: Self.t0 + 61, window: 60) }.count == 1)
            try await db.transaction { try await $0.attempts.reset(key: "k") }
            #expect(try await db.read { try await $0.attempts.current(key: "k", now: Self.t0 + 62, window: 60) }.count == 0)
        }
    }

    @Test("One-time codes: bounded attempts, single consumption, invalidation", arguments: TestDatabase.available)
    func codes(database: TestDatabase) async throws {
        try await Self.withPersistence(database) { db in
            let code = OneTimeCodeRecord(
                purpose: .verifyEmail, identifier: "ada@example.com", clientID: "app", userID: nil, codeHash: "c", tokenHash: "t",
                maxAttempts: 3, data: "{}", createdAt: Self.t0, expiresAt: Self.t0 + 600)
            try await db.transaction { try await $0.codes.insert(code) }
            #expect(try await db.read { try await $0.codes.find(tokenHash: "t") } == code)
            var attempts: [Int?] = []
            for _ in 0..<5 { attempts.append(try await db.transaction { try await $0.codes.recordAttempt(id: code.id) }) }
            #expect(attempts == [1, 2, 3, nil, nil])
            let consumed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { try await db.transaction { try await $0.codes.consume(id: code.id, at: Self.t0 + 1) } } }
                var won = 0
                for try await c in group where c { won += 1 }
                return won
            }
            #expect(consumed == 1)
            let fresh = OneTimeCodeRecord(
                purpose: .verifyEmail, identifier: "ada@example.com", clientID: "app", userID: nil, codeHash: "d", tokenHash: nil,
                maxAttempts: 5, data: nil, createdAt: Self.t0 + 2, expiresAt: Self.t0 + 600)
            try await db.transaction { try await $0.codes.insert(fresh) }
            #expect(
                try await db.read { try await $0.codes.findOpen(purpose: .verifyEmail, identifier: "ada@example.com", clientID: "app") }?.id
                    == fresh.id)
            try await db.transaction {
                try await $0.codes.invalidate(purpose: .verifyEmail, identifier: "ada@example.com", clientID: "app", at: Self.t0 + 3)
            }
            let value3 = try await db.read {
                try await $0.codes.findOpen(purpose: .verifyEmail, identifier: "ada@example.com", clientID: "app")
            }
            #expect(value3 == nil)
        }
    }

    @Test("Outbox: claims with a lease, retries, dead letters, revival", arguments: TestDatabase.available)
    func outbox(database: TestDatabase) async throws {
        try await Self.withPersistence(database) { db in
            let messages = (0..<5).map {
                OutboxMessage(
                    kind: "verification", channel: .email, recipient: "u\($0)@example.com", locale: "en", sealedPayload: "sealed\($0)",
                    createdAt: Self.t0 + Double($0))
            }
            try await db.transaction { stores in for m in messages { try await stores.outbox.enqueue(m) } }
            // Two claimers at once never get the same message.
            let claimed = try await withThrowingTaskGroup(of: [UUID].self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await db.transaction {
                            try await $0.outbox.claimDue(now: Self.t0 + 10, leaseUntil: Self.t0 + 70, limit: 3, channels: [.email, .sms])
                        }.map(\.id)
                    }
                }
                var all: [UUID] = []
                for try await ids in group { all += ids }
                return all
            }
            #expect(claimed.count == 5 && Set(claimed).count == 5)
            #expect(
                try await db.transaction {
                    try await $0.outbox.claimDue(now: Self.t0 + 20, leaseUntil: Self.t0 + 80, limit: 10, channels: [.email, .sms])
                }.isEmpty)
            // Lease ran out: due again, attempt counted.
            let again = try await db.transaction {
                try await $0.outbox.claimDue(now: Self.t0 + 71, leaseUntil: Self.t0 + 131, limit: 10, channels: [.email, .sms])
            }
            #expect(again.count == 5 && again.allSatisfy { $0.attempts == 2 })
            try await db.transaction { stores in
                try await stores.outbox.markSent(id: messages[0].id, at: Self.t0 + 72)
                try await stores.outbox.markFailed(id: messages[1].id, error: "timeout", retryAt: Self.t0 + 100, at: Self.t0 + 72)
                try await stores.outbox.markFailed(id: messages[2].id, error: "rejected", retryAt: nil, at: Self.t0 + 72)
            }
            let sent = try #require(try await db.read { try await $0.outbox.find(id: messages[0].id) })
            #expect(sent.status == .sent && sent.sealedPayload.isEmpty)
            #expect(try await db.read { try await $0.outbox.list(status: .dead, limit: 10) }.map(\.id) == [messages[2].id])
            #expect(
                try await db.transaction {
                    try await $0.outbox.claimDue(now: Self.t0 + 99, leaseUntil: Self.t0 + 159, limit: 10, channels: [.email, .sms])
                }.isEmpty)
            #expect(
                try await db.transaction {
                    try await $0.outbox.claimDue(now: Self.t0 + 100, leaseUntil: Self.t0 + 160, limit: 10, channels: [.email, .sms])
                }.map(\.id) == [messages[1].id])
            #expect(try await db.transaction { try await $0.outbox.retry(id: messages[2].id, at: Self.t0 + 101) })
            #expect(try await db.read { try await $0.outbox.find(id: messages[2].id) }?.status == .pending)
        }
    }

    @Test("Signing keys: the current first, retired ones until their window closes", arguments: TestDatabase.available)
    func signingKeys(database: TestDatabase) async throws {
        try await Self.withPersistence(database) { db in
            let old = SigningKeyRecord(kid: "old", algorithm: "ES256", publicJWK: "{}", sealedPrivateKey: "s1", createdAt: Self.t0)
            let new = SigningKeyRecord(kid: "new", algorithm: "ES256", publicJWK: "{}", sealedPrivateKey: "s2", createdAt: Self.t0 + 10)
            // A key of another algorithm is not retired by a rotation of ES256.
            let rsa = SigningKeyRecord(kid: "rsa", algorithm: "RS256", publicJWK: "{}", sealedPrivateKey: "s3", createdAt: Self.t0 + 5)
            try await db.transaction { stores in
                try await stores.signingKeys.insert(old)
                try await stores.signingKeys.insert(rsa)
                try await stores.signingKeys.insert(new)
                try await stores.signingKeys.retire(algorithm: "ES256", except: "new", at: Self.t0 + 10, publishUntil: Self.t0 + 100)
            }
            #expect(try await db.read { try await $0.signingKeys.listPublished(now: Self.t0 + 50) }.map(\.kid) == ["new", "rsa", "old"])
            #expect(try await db.read { try await $0.signingKeys.listPublished(now: Self.t0 + 101) }.map(\.kid) == ["new", "rsa"])
        }
    }
}
