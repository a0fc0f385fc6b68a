import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import Synchronization
import Testing

/// A credential type that exists only in this test target: a device holds a key, the server holds
/// the same key in the credential's config, and a sign-in sends an HMAC of a fixed message. Nothing
/// in the flows knows of it; the runner signs in with it as with a password.
struct FixedKeyStrategy: CredentialStrategy {
    struct Submission: Sendable {
        var keyID: String
        var proof: String
    }

    struct Config: Codable {
        var key: String
    }

    static let message = Data("gatehouse-fixed-key-test".utf8)

    var type: CredentialType { CredentialType(rawValue: "fixed_key") }
    var amr: [String] { ["hwk"] }
    var provesIdentifier: Bool { true }

    func identifier(of submission: Submission) throws -> String {
        guard !submission.keyID.isEmpty, submission.keyID.count <= 64 else { throw GatehouseError.invalidCredentials }
        return submission.keyID
    }

    func verify(_ submission: Submission, against credential: CredentialRecord) async throws -> CredentialVerification {
        let config = try credential.decodeConfig(Config.self)
        let expected = Self.proof(key: config.key)
        return Secrets.constantTimeEquals(expected, submission.proof) ? .verified(upgradedConfig: nil) : .rejected
    }

    func verifyUnknown(_ submission: Submission) async throws {
        _ = Self.proof(key: "unknown")
    }

    static func proof(key: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(key.utf8)))).base64EncodedString()
    }
}

/// Records what passes the hook points and refuses sign-ups from one domain.
final class RecordingHook: FlowHook {
    let events = Recorded()

    func before(_ event: HookEvent) async throws -> HookVerdict {
        events.append("before \(event.point.rawValue) \(event)")
        if event.point == .flowStart, event.meta.ipAddress == "198.51.100.66" {
            return .deny(ValidationResult())
        }
        if event.point == .signup, event.identifier?.hasSuffix("@blocked.example") == true {
            var result = ValidationResult()
            result.invalidate(field: "email", code: .invalidValue, message: "This domain may not sign up.")
            return .deny(result)
        }
        return .allow
    }

    func after(_ event: HookEvent) async {
        events.append("after \(event.point.rawValue) \(event)")
    }
}

final class Recorded: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite("Credential strategies and hook points")
struct CustomStrategyTests {
    static let meta = RequestMeta(ipAddress: "192.0.2.20")

    @Test("A strategy defined only in the tests signs in through the runner, with its amr and failure counting")
    func fixedKeySignIn() async throws {
        let core = try await CoreHarness.start()
        try await core.createClient(id: "app", settings: ["email_verification=required"])
        let user = UserRecord(email: "device@example.com", createdAt: core.clock.now())
        let credential = CredentialRecord(
            userID: user.id, type: FixedKeyStrategy().type, identifiers: ["key-1"],
            config: try CredentialRecord.encodeConfig(FixedKeyStrategy.Config(key: "s3cret-device-key")),
            createdAt: core.clock.now())
        try await core.persistence.transaction {
            try await $0.users.insert(user)
            try await $0.credentials.insert(credential)
        }
        let request = FlowRunner.SignInRequest(clientID: "app", scope: "openid", meta: Self.meta)
        let runner = FlowRunner(services: core.services)

        do {
            _ = try await runner.signIn(
                with: FixedKeyStrategy(), submission: .init(keyID: "key-1", proof: "forged"), request: request)
            Issue.record("a forged proof signed in")
        } catch let error as GatehouseError {
            #expect(error.code == .invalidCredentials)
        }
        #expect(try await core.persistence.read { try await $0.credentials.find(id: credential.id) }?.failureCount == 1)

        let tokens = try await runner.signIn(
            with: FixedKeyStrategy(),
            submission: .init(keyID: "key-1", proof: FixedKeyStrategy.proof(key: "s3cret-device-key")), request: request)
        let claims = try await core.services.tokens.verify(tokens.accessToken)
        #expect(claims.amr == ["hwk"] && claims.sub == user.id.uuidString.lowercased())
        #expect(tokens.idToken != nil && tokens.isNew == false)
        // The strategy proves its identifier, so an unverified email does not stop it; success resets the count.
        #expect(try await core.persistence.read { try await $0.credentials.find(id: credential.id) }?.failureCount == 0)
        let sessions = try await core.persistence.read { try await $0.sessions.listLive(userID: user.id, now: core.clock.now()) }
        #expect(sessions.count == 1 && sessions.first?.amr == ["hwk"])
        await core.stop()
    }

    @Test("Hook points: a before-hook refuses with field errors; after-hooks see the user; no secret reaches a hook")
    func hooks() async throws {
        let hook = RecordingHook()
        let core = try await CoreHarness.start(hooks: [hook])
        try await core.createClient(id: "app", settings: ["email_verification=off"])
        let signup = SignupFlow(services: core.services)
        do {
            _ = try await signup.signup(
                SignupFlow.Registration(clientID: "app", email: "eve@blocked.example", password: "correct horse battery"), meta: Self.meta)
            Issue.record("the hook's refusal was ignored")
        } catch let error as GatehouseError {
            #expect(error.category == .validation && error.fieldErrors.first?.field == "email")
        }
        #expect(try await core.persistence.read { try await $0.users.find(email: "eve@blocked.example") } == nil)

        _ = try await signup.signup(
            SignupFlow.Registration(clientID: "app", email: "ada@example.com", password: "correct horse battery"), meta: Self.meta)
        _ = try await LoginFlow(services: core.services).login(
            LoginFlow.PasswordSignIn(clientID: "app", email: "ada@example.com", password: "correct horse battery"), meta: Self.meta)
        let lines = hook.events.all
        #expect(lines.filter { $0.hasPrefix("before signup") }.count == 2)
        #expect(lines.contains { $0.hasPrefix("after signup") && $0.contains("userID: Optional(") })
        #expect(lines.contains { $0.hasPrefix("before login") } && lines.contains { $0.hasPrefix("after login") })
        #expect(!lines.contains { $0.contains("correct horse battery") })
        await core.stop()
    }

    @Test(
        "Persisted flows: a flow_start hook may refuse one, CSRF checked, advanced once per step, finished exactly once (flow_complete once), expired after their lifetime"
    )
    func persistedFlows() async throws {
        let hook = RecordingHook()
        let core = try await CoreHarness.start(hooks: [hook])
        let client = try await core.createClient(id: "app", redirectURIs: ["com.example.app:/done"]).client
        let runner = FlowRunner(services: core.services)
        for uri in ["com.example.evil:/done", "//evil.example/done"] {
            await #expect(throws: GatehouseError.self) {
                try await runner.begin(.authorize, client: client, redirectURI: uri, meta: Self.meta)
            }
        }
        await #expect(throws: GatehouseError.self) {
            try await runner.begin(.authorize, client: client, meta: RequestMeta(ipAddress: "198.51.100.66"))
        }
        let begun = try await runner.begin(
            .authorize, client: client, redirectURI: "com.example.app:/done", state: "xyz", meta: Self.meta)
        do {
            _ = try await runner.load(begun.flow.id, kind: .authorize, binding: "gh_csrf_wrong")
            Issue.record("a wrong CSRF token loaded the flow")
        } catch let error as GatehouseError {
            #expect(error.code == .csrfFailed)
        }
        let loaded = try await runner.load(begun.flow.id, kind: .authorize, binding: begun.csrfToken)
        #expect(loaded.state == "xyz" && loaded.step == .started)
        let ada = UserRecord(email: "ada@example.com", createdAt: core.clock.now())
        try await core.persistence.transaction { try await $0.users.insert(ada) }
        let user = ada.id
        let moved = try await runner.advance(loaded, to: .authenticated, userID: user)
        await #expect(throws: GatehouseError.self) { try await runner.advance(loaded, to: .authenticated) }

        let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { (try? await runner.complete(begun.flow.id)) != nil }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(winners == 1 && moved.userID == user)
        #expect(hook.events.all.filter { $0.hasPrefix("before flow_start") }.count == 2)
        #expect(hook.events.all.filter { $0.hasPrefix("after flow_complete") }.count == 1)

        let late = try await runner.begin(.login, client: client, meta: Self.meta)
        core.clock.advance(by: core.services.settings.flowLifetime + 1)
        await #expect(throws: GatehouseError.self) { try await runner.complete(late.flow.id) }
        await core.stop()
    }
}
