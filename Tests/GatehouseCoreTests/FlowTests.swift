import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import Testing

/// The flows against in-memory ports: rules without a database, a socket or HTTP.
@Suite("Flows on in-memory ports")
struct FlowTests {
    static let meta = RequestMeta(ipAddress: "192.0.2.10", userAgent: "flow-test")

    @Test("Sign-up with verification off signs in at once; is_new, amr pwd, a password credential by email")
    func signupSignsIn() async throws {
        let core = try await CoreHarness.start()
        try await core.createClient(id: "app", settings: ["email_verification=off"])
        let outcome = try await SignupFlow(services: core.services).signup(
            SignupFlow.Registration(clientID: "app", email: "Ada@Example.com", password: "correct horse battery"), meta: Self.meta)
        guard case .signedIn(let tokens) = outcome else { Issue.record("expected a session"); return }
        #expect(tokens.isNew == true && tokens.refreshToken != nil)
        #expect(try await core.services.tokens.verify(tokens.accessToken).amr == ["pwd"])
        let credential = try #require(
            try await core.persistence.read { try await $0.credentials.find(type: .password, identifier: "ada@example.com") })
        #expect(credential.identifiers == ["ada@example.com"] && credential.config.contains("$argon2id$"))
        #expect(tokens.user?.hasPassword == true)
        await core.stop()
    }

    @Test("Sign-up with verification required waits; the mailed code verifies and signs in")
    func signupThenVerify() async throws {
        let core = try await CoreHarness.start()
        try await core.createClient(id: "app")
        let outcome = try await SignupFlow(services: core.services).signup(
            SignupFlow.Registration(clientID: "app", email: "grace@example.com", password: "correct horse battery"), meta: Self.meta)
        guard case .verificationRequired(let user) = outcome else { Issue.record("expected pending"); return }
        #expect(!user.emailVerified)
        await #expect(throws: GatehouseError.self) {
            try await LoginFlow(services: core.services).login(
                LoginFlow.PasswordSignIn(clientID: "app", email: "grace@example.com", password: "correct horse battery"), meta: Self.meta)
        }
        let code = try #require(try await core.outboxVariables(to: "grace@example.com", kind: "verification").last?["code"])
        let tokens = try await VerificationFlow(services: core.services).verify(
            email: "grace@example.com", code: code, clientID: "app", meta: Self.meta)
        #expect(tokens.user?.emailVerified == true)
        let login = try await LoginFlow(services: core.services).login(
            LoginFlow.PasswordSignIn(clientID: "app", email: "grace@example.com", password: "correct horse battery"), meta: Self.meta)
        #expect(login.isNew == false)
        await core.stop()
    }

    @Test("Login: a wrong password counts on the credential and the throttle; success resets the credential's count")
    func loginCounts() async throws {
        let core = try await CoreHarness.start()
        try await core.createClient(id: "app", settings: ["email_verification=off"])
        _ = try await SignupFlow(services: core.services).signup(
            SignupFlow.Registration(clientID: "app", email: "ada@example.com", password: "correct horse battery"), meta: Self.meta)
        let login = LoginFlow(services: core.services)
        for _ in 0..<2 {
            do {
                _ = try await login.login(
                    LoginFlow.PasswordSignIn(clientID: "app", email: "ada@example.com", password: "wrong password!"), meta: Self.meta)
                Issue.record("a wrong password signed in")
            } catch let error as GatehouseError {
                #expect(error.code == .invalidCredentials && error.category == .unauthenticated)
            }
        }
        let find = { @Sendable in
            try await core.persistence.read { try await $0.credentials.find(type: .password, identifier: "ada@example.com") }
        }
        #expect(try await find()?.failureCount == 2)
        // An unknown address answers exactly the same.
        do {
            _ = try await login.login(
                LoginFlow.PasswordSignIn(clientID: "app", email: "nobody@example.com", password: "whatever pass"), meta: Self.meta)
            Issue.record("an unknown address signed in")
        } catch let error as GatehouseError {
            #expect(error.code == .invalidCredentials && error.detail == GatehouseError.invalidCredentials.detail)
        }
        let tokens = try await login.login(
            LoginFlow.PasswordSignIn(clientID: "app", email: "ADA@example.com", password: "correct horse battery", scope: "openid"),
            meta: Self.meta)
        #expect(tokens.idToken != nil && tokens.isNew == false)
        #expect(try await find()?.failureCount == 0)
        await core.stop()
    }

    @Test("Refresh rotates; a retry inside the grace gets the same successor; reuse after it revokes the session")
    func refresh() async throws {
        let core = try await CoreHarness.start()
        let client = try await core.createClient(id: "app", settings: ["email_verification=off"]).client
        guard
            case .signedIn(let first) = try await SignupFlow(services: core.services).signup(
                SignupFlow.Registration(clientID: "app", email: "ada@example.com", password: "correct horse battery"), meta: Self.meta)
        else { Issue.record("expected a session"); return }
        let flow = RefreshFlow(services: core.services)
        let token = try #require(first.refreshToken)
        let next = try await flow.refresh(token: token, client: client, scope: nil)
        let retried = try await flow.refresh(token: token, client: client, scope: nil)
        #expect(next.refreshToken != nil && next.refreshToken == retried.refreshToken && next.refreshToken != token)
        let third = try await flow.refresh(token: try #require(next.refreshToken), client: client, scope: nil)
        #expect(third.refreshToken != next.refreshToken)

        core.clock.advance(by: 11)
        do {
            _ = try await flow.refresh(token: token, client: client, scope: nil)
            Issue.record("a reused token was accepted")
        } catch let error as GatehouseError {
            #expect(error.code == .invalidGrant && error.category == .oauth)
        }
        // The theft response ended the session: the newest token is dead too.
        await #expect(throws: GatehouseError.self) {
            try await flow.refresh(token: try #require(third.refreshToken), client: client, scope: nil)
        }
        await core.stop()
    }

    @Test("Recovery: the mailed code gives a recovery session that sets a new password without the old one")
    func recovery() async throws {
        let core = try await CoreHarness.start()
        try await core.createClient(id: "app", settings: ["email_verification=off"])
        _ = try await SignupFlow(services: core.services).signup(
            SignupFlow.Registration(clientID: "app", email: "ada@example.com", password: "correct horse battery"), meta: Self.meta)
        let recovery = RecoveryFlow(services: core.services)
        try await recovery.request(email: "ada@example.com", clientID: "app", meta: Self.meta)
        let code = try #require(try await core.outboxVariables(to: "ada@example.com", kind: "recovery").last?["code"])
        let session = try await recovery.verify(email: "ada@example.com", code: code, token: nil, clientID: "app", meta: Self.meta)
        let claims = try await core.services.tokens.verify(session.accessToken)
        #expect(claims.amr == ["recovery"])
        let principal = try #require(try await BearerAuthenticator(services: core.services).authenticate(.bearer(session.accessToken)))
        try await AccountFlow(services: core.services).changePassword(
            principal, AccountFlow.PasswordChange(currentPassword: nil, password: "a brand new passphrase"), meta: Self.meta)

        let login = LoginFlow(services: core.services)
        await #expect(throws: GatehouseError.self) {
            try await login.login(
                LoginFlow.PasswordSignIn(clientID: "app", email: "ada@example.com", password: "correct horse battery"), meta: Self.meta)
        }
        _ = try await login.login(
            LoginFlow.PasswordSignIn(clientID: "app", email: "ada@example.com", password: "a brand new passphrase"), meta: Self.meta)
        // The code was single use.
        await #expect(throws: GatehouseError.self) {
            try await recovery.verify(email: "ada@example.com", code: code, token: nil, clientID: "app", meta: Self.meta)
        }
        await core.stop()
    }
}
