import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Logging
import Synchronization
import Testing

/// Rotating the server secret as `docs/operations.md` says: the new secret added behind the old one,
/// promoted, everything resealed with `resealSecrets` (what `gatehouse secret rotate` runs), the old
/// one removed; a server restarted at each step on the same database. `scripts/secret-drill` does
/// the same with the real binary on two PostgreSQL nodes under load.
@Suite("Server secret rotation")
struct SecretRotationTests {
    static let password = "correct horse battery"

    @Test(
        "SR-1: after a rotation every token, signing key, authenticator app, recovery code, pairwise subject and unsent mail still works; the old secret alone opens nothing and a node holding only it refuses to start, naming the secret it lacks",
        arguments: TestDatabase.available)
    func rotation(_ database: TestDatabase) async throws {
        guard await IndependentTOTP.isAvailable() else {
            print("SR-1 skipped: pyotp (the independent TOTP implementation) is not installed")
            return
        }
        let (url, dropDatabase) = try await database.make()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gh-secret-rotation-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("secret").path
        let old = ServerSecret.generateLine(), new = ServerSecret.generateLine()
        let clock = TestClock()
        func start(_ lines: [String], first: Bool = false) async throws -> TestServer {
            try (lines.joined(separator: "\n") + "\n").write(toFile: secretFile, atomically: true, encoding: .utf8)
            let configure: (inout ServerConfiguration) -> Void = {
                $0.databaseURL = url
                $0.secretFile = secretFile
            }
            return first
                ? try await TestServer.startOpen(database, clock: clock, configure: configure)
                : try await TestServer.start(database, clock: clock, configure: configure)
        }
        // A server's router for one step; the server stops after it, as a node restarted by the operator.
        func step(_ server: TestServer, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
            do {
                try await server.server.makeApplication().test(.router, body)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
        @Sendable func totpSignIn(_ client: any TestClientProtocol, _ email: String, _ secret: String) async throws -> TestResponse {
            clock.advance(by: 31)  // a new step: each code is accepted once
            let login = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": email, "password": Self.password])
            let code = try await IndependentTOTP.code(secret, at: clock.now()) ?? ""
            return try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": login.string("flow_id") ?? "", "factor": "totp", "code": code])
        }
        struct State: Sendable {
            var email = "rotation@example.com"
            var totpSecret = ""
            var recoveryCodes: [String] = []
            var accessToken = ""
            var refreshToken = ""
            /// The sign-up's session, never refreshed: its token was made under the old secret only.
            var idleRefreshToken = ""
            var pairwise = ""
            var kid = ""
        }
        let state = Mutex(State())

        // 1. The old secret alone: an account with an authenticator app, a mail waiting in the outbox.
        let first = try await start([old], first: true)
        let firstSecret = first.services.secret
        try await step(first) { client in
            let user = try await signUp(client, email: state.withLock { $0.email }, password: Self.password)
            let enrolled = try await client.json(.post, "/v1/me/factors/totp", bearer: user.accessToken)
            let secret = try #require(enrolled.string("secret"))
            let code = try #require(try await IndependentTOTP.code(secret, at: clock.now()))
            let confirmed = try await client.json(
                .post, "/v1/me/factors/\(try #require(enrolled.string("id")))/confirm", ["code": code], bearer: user.accessToken)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            let signedIn = try await totpSignIn(client, user.email, secret)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let recovery = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email])
            #expect(recovery.status == .accepted, "a recovery mail queued: \(recovery.text)")
            state.withLock {
                $0.totpSecret = secret
                $0.recoveryCodes = confirmed.object["recovery_codes"] as? [String] ?? []
                $0.accessToken = signedIn.string("access_token") ?? ""
                $0.refreshToken = signedIn.string("refresh_token") ?? ""
                $0.idleRefreshToken = user.refreshToken
                $0.pairwise = firstSecret.pairwiseSubject(userID: "u", sector: "rp.example")
                $0.kid = first.server.keys.currentKID(.es256) ?? ""
            }
        }
        #expect(first.mail.messages.isEmpty, "the outbox dispatcher is off: the mail waits sealed")

        // 2. The new secret added behind the old one, then 3. promoted: every step still serves.
        for lines in [[old, new], [new, old]] {
            let server = try await start(lines)
            #expect(server.services.secret.pairwiseSubject(userID: "u", sector: "rp.example") == state.withLock { $0.pairwise })
            try await step(server) { client in
                let current = state.withLock { $0 }
                #expect(try await client.json(.get, "/v1/me", bearer: current.accessToken).status == .ok)
                let refreshed = try await refresh(client, current.refreshToken)
                #expect(refreshed.status == .ok, "\(refreshed.text)")
                #expect(try await totpSignIn(client, current.email, current.totpSecret).status == .ok)
                state.withLock { $0.refreshToken = refreshed.string("refresh_token") ?? "" }
            }
        }

        // 4. Everything resealed under the new secret, while nothing is left under the old one.
        let persistence = try await SQLPersistence.open(try DatabaseURL(url), logger: Logger(label: "reseal"))
        let ring = try await persistence.adoptStableKeys(try ServerSecret.loadOrCreate(path: secretFile), now: clock.now())
        let resealed = try await persistence.resealSecrets(ring, batchSize: 1)
        let byPlace = Dictionary(uniqueKeysWithValues: resealed.places.map { ($0.name, $0) })
        #expect(byPlace["signing keys"]?.previous == 2 && byPlace["authenticator apps"]?.previous == 1)
        #expect(byPlace["stable keys"]?.previous == 1 && (byPlace["outbox"]?.previous ?? 0) >= 1)
        #expect(resealed.unopenable == 0)
        let after = try await persistence.resealSecrets(ring, dryRun: true)
        #expect(after.previous == 0 && after.unopenable == 0)
        // The old secret alone opens none of it.
        let oldOnly = try await persistence.resealSecrets(try ServerSecret(ring: [Array(Data(base64Encoded: old)!)]), dryRun: true)
        #expect(oldOnly.places.allSatisfy { $0.current == 0 } && oldOnly.unopenable == after.places.reduce(0) { $0 + $1.current })
        await persistence.shutdown()

        // 5. The old secret removed: still every token, key, factor, code and mail.
        let last = try await start([new])
        #expect(last.server.keys.currentKID(.es256) == state.withLock { $0.kid })
        #expect(last.services.secret.pairwiseSubject(userID: "u", sector: "rp.example") == state.withLock { $0.pairwise })
        #expect(try await last.deliverMail() >= 1)
        #expect(last.mail.messages.contains { $0.recipient == "rotation@example.com" && $0.kind == "recovery" })
        try await step(last) { client in
            let current = state.withLock { $0 }
            #expect(try await client.json(.get, "/v1/me", bearer: current.accessToken).status == .ok)
            #expect(try await refresh(client, current.refreshToken).status == .ok)
            // A chain's current token is known by its stored hash, not only by a secret of the ring.
            let idle = try await refresh(client, current.idleRefreshToken)
            #expect(idle.status == .ok, "a refresh token made under the removed secret: \(idle.text)")
            #expect(try await totpSignIn(client, current.email, current.totpSecret).status == .ok)
            let login = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": current.email, "password": Self.password])
            let recovery = try await client.json(
                .post, "/v1/mfa/verify",
                ["flow_id": login.string("flow_id") ?? "", "factor": "recovery_code", "code": current.recoveryCodes.first ?? ""])
            #expect(recovery.status == .ok, "a recovery code made under the old secret: \(recovery.text)")
        }

        // 6. A node holding only the old secret refuses to start and says what it lacks.
        do {
            _ = try await start([old])
            Issue.record("a node with only the old secret started")
        } catch let mismatch as ServerSecretMismatch {
            #expect(mismatch.sealedUnder == ring.fingerprints[0] && mismatch.description.contains("do not open with this server secret"))
        }
        await dropDatabase()
        try? FileManager.default.removeItem(at: directory)
    }
}
