import Foundation
import GatehouseCore
import GatehouseStore
import GatehouseTesting
import Logging
import Testing

/// Where a contract runs: each SQL database available here, and the in-memory ports the flow tests
/// use, so those are held to the same rules.
enum ContractTarget: Sendable, CustomStringConvertible {
    case memory
    case sql(TestDatabase)

    static var all: [ContractTarget] { [.memory] + TestDatabase.available.map { .sql($0) } }

    var description: String {
        switch self {
        case .memory: "memory"
        case .sql(let database): database.description
        }
    }

    func with(_ body: (any Persistence) async throws -> Void) async throws {
        switch self {
        case .memory:
            try await body(InMemoryPersistence())
        case .sql(let database):
            try await PersistenceContractTests.withPersistence(database) { try await body($0) }
        }
    }
}

/// The contract of credentials, persisted flows and browser sessions.
@Suite("Credentials, flows and browser sessions contract")
struct CredentialAndFlowContractTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func user(_ email: String) -> UserRecord { UserRecord(email: email, createdAt: t0) }

    static func credential(_ user: UserRecord, type: CredentialType = .password, _ identifiers: [String]) -> CredentialRecord {
        CredentialRecord(userID: user.id, type: type, identifiers: identifiers, config: "{}", createdAt: t0)
    }

    @Test(
        "Identifiers are unique per type, found by type and identifier, replaced on update, gone with their credential",
        arguments: ContractTarget.all)
    func identifiers(target: ContractTarget) async throws {
        try await target.with { db in
            let ada = Self.user("ada@example.com"), bob = Self.user("bob@example.com")
            let password = Self.credential(ada, ["ada@example.com"])
            let device = Self.credential(ada, type: .deviceAuthenticator, ["device-1:key-1"])
            try await db.transaction { stores in
                try await stores.users.insert(ada)
                try await stores.users.insert(bob)
                try await stores.credentials.insert(password)
                try await stores.credentials.insert(device)
                // The same identifier under another type is another credential's to have.
                try await stores.credentials.insert(Self.credential(bob, type: .oidc, ["ada@example.com"]))
            }
            await #expect(throws: StoreError.conflict("credential identifier")) {
                try await db.transaction { try await $0.credentials.insert(Self.credential(bob, ["ada@example.com"])) }
            }
            // The refused insert left nothing behind, not even its credential row.
            #expect(try await db.read { try await $0.credentials.list(userID: bob.id, type: .password) }.isEmpty)
            #expect(try await db.read { try await $0.credentials.find(type: .password, identifier: "ada@example.com") }?.id == password.id)
            #expect(try await db.read { try await $0.credentials.list(userID: ada.id, type: nil) }.count == 2)
            // Several types in one read: exactly those, with their identifiers.
            let some = try await db.read { try await $0.credentials.list(userID: ada.id, types: [.deviceAuthenticator, .passkey]) }
            #expect(some.map(\.id) == [device.id] && some.first?.identifiers == ["device-1:key-1"])
            #expect(try await db.read { try await $0.credentials.list(userID: ada.id, types: []) }.isEmpty)
            #expect(try await db.read { try await $0.users.find(id: ada.id) }?.hasPassword == true)

            var renamed = password
            renamed.identifiers = ["ada@new.example", "+4790012345"]
            renamed.config = #"{"v":2}"#
            let toSave = renamed
            try await db.transaction { try await $0.credentials.update(toSave) }
            #expect(try await db.read { try await $0.credentials.find(type: .password, identifier: "ada@example.com") } == nil)
            let found = try #require(try await db.read { try await $0.credentials.find(type: .password, identifier: "+4790012345") })
            #expect(found.identifiers.sorted() == ["+4790012345", "ada@new.example"] && found.config == #"{"v":2}"#)

            #expect(try await db.read { try await $0.credentials.count(userID: ada.id, type: .password) } == 1)
            #expect(try await db.read { try await $0.credentials.count(userID: bob.id, type: .password) } == 0)
            #expect(try await db.transaction { try await $0.credentials.deleteAll(userID: ada.id, type: .password) } == 1)
            #expect(try await db.read { try await $0.credentials.find(type: .password, identifier: "ada@new.example") } == nil)
            #expect(try await db.read { try await $0.users.find(id: ada.id) }?.hasPassword == false)
            #expect(try await db.transaction { try await $0.credentials.delete(id: device.id) })
            #expect(try await !db.transaction { try await $0.credentials.delete(id: device.id) })
            // Its identifier is free again.
            try await db.transaction {
                try await $0.credentials.insert(Self.credential(bob, type: .deviceAuthenticator, ["device-1:key-1"]))
            }
        }
    }

    @Test("20 concurrent failures on one credential count to exactly 20; a reset clears them", arguments: ContractTarget.all)
    func failureCounter(target: ContractTarget) async throws {
        try await target.with { db in
            let ada = Self.user("ada@example.com")
            let pin = Self.credential(ada, type: .deviceAuthenticator, ["device:pin"])
            try await db.transaction { stores in
                try await stores.users.insert(ada)
                try await stores.credentials.insert(pin)
            }
            let counts = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await db.transaction { try await $0.credentials.recordFailure(id: pin.id, at: Self.t0) } }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1 ?? -1) }
            }
            #expect(counts.sorted() == Array(1...20))
            #expect(try await db.read { try await $0.credentials.find(id: pin.id) }?.failureCount == 20)
            _ = try await db.transaction { try await $0.credentials.resetFailures(id: pin.id) }
            #expect(try await db.read { try await $0.credentials.find(id: pin.id) }?.failureCount == 0)
            #expect(try await db.transaction { try await $0.credentials.recordFailure(id: "gone", at: Self.t0) } == nil)
        }
    }

    @Test(
        "A flow advances once per step and is consumed by exactly one of 20 racing callers, never after expiry",
        arguments: ContractTarget.all)
    func flows(target: ContractTarget) async throws {
        try await target.with { db in
            let pkce = PKCEChallenge(challenge: String(repeating: "a", count: 43), method: "S256")
            let flow = FlowRecord(
                kind: .authorize, clientID: "app", redirectURI: "com.example.app:/cb", pkce: pkce, nonce: "n-1", state: "s-1",
                csrfHash: Secrets.sha256Hex("csrf"), createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(600))
            try await db.transaction { try await $0.flows.insert(flow) }
            #expect(try await db.read { try await $0.flows.find(id: flow.id) } == flow)

            let now = Self.t0.addingTimeInterval(10)
            let ada = Self.user("ada@example.com")
            try await db.transaction { try await $0.users.insert(ada) }
            let user = ada.id
            // A flow can only name a user that exists.
            await #expect(throws: (any Error).self) {
                try await db.transaction {
                    try await $0.flows.advance(id: flow.id, from: .started, to: .authenticated, userID: UUID(), data: nil, at: now)
                }
            }
            #expect(
                try await db.transaction {
                    try await $0.flows.advance(id: flow.id, from: .started, to: .authenticated, userID: user, data: "{}", at: now)
                })
            #expect(
                try await !db.transaction {
                    try await $0.flows.advance(id: flow.id, from: .started, to: .authenticated, userID: nil, data: nil, at: now)
                })

            let winners = try await withThrowingTaskGroup(of: FlowRecord?.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await db.transaction { try await $0.flows.consume(id: flow.id, at: now) } }
                }
                return try await group.reduce(into: [FlowRecord]()) { if let won = $1 { $0.append(won) } }
            }
            #expect(winners.count == 1)
            #expect(winners.first?.userID == user && winners.first?.step == .authenticated && winners.first?.pkce == pkce)

            let stale = FlowRecord(
                kind: .login, clientID: "app", csrfHash: "x", createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(60))
            try await db.transaction { try await $0.flows.insert(stale) }
            #expect(try await db.transaction { try await $0.flows.consume(id: stale.id, at: Self.t0.addingTimeInterval(61)) } == nil)
        }
    }

    @Test("Browser sessions: found by token hash, touched, revoked once, all of a user's ended", arguments: ContractTarget.all)
    func browserSessions(target: ContractTarget) async throws {
        try await target.with { db in
            let ada = Self.user("ada@example.com")
            try await db.transaction { try await $0.users.insert(ada) }
            let first = BrowserSessionRecord(
                tokenHash: Secrets.sha256Hex("one"), userID: ada.id, amr: ["pwd"], authTime: Self.t0, userAgent: "UA",
                ipAddress: "192.0.2.1", createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3600))
            let second = BrowserSessionRecord(
                tokenHash: Secrets.sha256Hex("two"), userID: ada.id, amr: ["otp"], authTime: Self.t0, userAgent: nil,
                ipAddress: nil, createdAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3600))
            try await db.transaction { stores in
                try await stores.browserSessions.insert(first)
                try await stores.browserSessions.insert(second)
            }
            #expect(try await db.read { try await $0.browserSessions.find(tokenHash: Secrets.sha256Hex("one")) } == first)
            try await db.transaction { try await $0.browserSessions.touch(id: first.id, at: Self.t0.addingTimeInterval(5)) }
            #expect(
                try await db.read { try await $0.browserSessions.find(tokenHash: first.tokenHash) }?.lastSeenAt
                    == Self.t0.addingTimeInterval(5))
            #expect(try await db.transaction { try await $0.browserSessions.revoke(id: first.id, at: Self.t0) })
            #expect(try await !db.transaction { try await $0.browserSessions.revoke(id: first.id, at: Self.t0) })
            #expect(try await db.transaction { try await $0.browserSessions.revokeAll(userID: ada.id, at: Self.t0) } == 1)
            #expect(try await db.read { try await $0.browserSessions.find(tokenHash: second.tokenHash) }?.isLive(at: Self.t0) == false)

            // A sign-in's time read back stays in its second (tokens' `auth_time` is whole seconds), even a
            // hair before the next one.
            let late = Self.t0.addingTimeInterval(0.9996)
            let third = BrowserSessionRecord(
                tokenHash: Secrets.sha256Hex("three"), userID: ada.id, amr: ["pwd"], authTime: late, userAgent: nil,
                ipAddress: nil, createdAt: late, expiresAt: late.addingTimeInterval(3600))
            try await db.transaction { try await $0.browserSessions.insert(third) }
            let stored = try #require(try await db.read { try await $0.browserSessions.find(tokenHash: third.tokenHash) })
            #expect(Int(stored.authTime.timeIntervalSince1970) == Int(late.timeIntervalSince1970))
        }
    }
}
