import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import Testing

/// The gate with what stands behind it in production: a browser's single sign-on from before a
/// requirement (step-up), and the authenticator app as the required factor.
extension AssuranceGateTests {
    @Test(
        "A browser signed in before the requirement: prompt=none answers interaction_required; otherwise the flow waits on its factor page, and the factor renews the same browser session with mfa before the code"
    )
    func browserSessionStepUp() async throws {
        let policy = RequireTestFactor(clients: [])
        let core = try await CoreHarness.start(assurance: policy, factors: [TestSecondFactor()])
        defer { Task { await core.stop() } }
        try await core.createClient(id: "app", redirectURIs: [Self.redirect], settings: ["email_verification=off"])
        _ = try await SignupFlow(services: core.services).signup(
            SignupFlow.Registration(clientID: "app", email: "sso@example.com", password: Self.password), meta: Self.meta)
        let authorize = AuthorizeFlow(services: core.services)
        guard
            case .show(let first) = try await authorize.begin(
                Self.authorizeParameters, browser: nil, binding: Self.binding, meta: Self.meta)
        else {
            Issue.record("no sign-in page")
            return
        }
        let (_, cookie) = try await authorize.signIn(
            first, binding: Self.binding, email: "sso@example.com", password: Self.password, browser: nil, meta: Self.meta)
        let cookieValue = try #require(cookie)
        let browser = try #require(try await core.services.browserSessions.authenticate(cookieValue: cookieValue))
        #expect(!browser.session.amr.contains("mfa"))

        policy.require(for: "app")
        var silent = Self.authorizeParameters
        silent["prompt"] = "none"
        guard case .respond(let refused) = try await authorize.begin(silent, browser: browser, binding: Self.binding, meta: Self.meta)
        else {
            Issue.record("prompt=none showed a page")
            return
        }
        #expect(refused.fields.first { $0.0 == "error" }?.1 == "interaction_required")

        let before = core.persistence.startedCounts()
        guard
            case .show(let flow) = try await authorize.begin(
                Self.authorizeParameters, browser: browser, binding: Self.binding, meta: Self.meta)
        else {
            Issue.record("the browser's session answered without the factor")
            return
        }
        let page = try await authorize.page(flow, binding: Self.binding, browser: browser)
        #expect(page.flow.step == .secondFactor && page.factors == ["test"])
        #expect(core.persistence.startedCounts() == before, "the step-up started something before the factor")

        let (outcome, renewed) = try await authorize.completeFactor(
            flow, binding: Self.binding, factor: "test", response: TestSecondFactor.answer, meta: Self.meta)
        guard case .respond(let answer) = outcome else {
            Issue.record("the factor did not lead to the client's code: \(outcome)")
            return
        }
        #expect(answer.fields.contains { $0.0 == "code" })
        // The same browser session, renewed in place with the factor; and one code.
        let after = try #require(try await core.services.browserSessions.authenticate(cookieValue: renewed ?? cookieValue))
        #expect(after.session.id == browser.session.id && after.session.amr.contains("mfa"))
        #expect(core.persistence.startedCounts().authorizationCodes == before.authorizationCodes + 1)
        #expect(core.persistence.startedCounts().browserSessions == before.browserSessions)
    }

    @Test(
        "GATE-1 with the real factor: a user with a confirmed authenticator app is held at the gate by every method that signs an existing account in; a pyotp code completes it, once",
        arguments: [Method.password, .mailCode, .recovery, .deviceAuthenticator, .hostedPassword, .hostedCode, .webSession])
    func totpGate(_ method: Method) async throws {
        guard await IndependentTOTP.isAvailable() else {
            print("skipped: pip install pyotp to run the gate with the authenticator app as the factor")
            return
        }
        let idp = TestIDTokenIssuer()
        let clock = TestClock()
        let core = try await CoreHarness.startWithFactors(social: Self.social(idp, clock: clock), clock: clock)
        defer { Task { await core.stop() } }
        try await core.createClient(
            id: "app", redirectURIs: [Self.redirect],
            settings: ["email_verification=off", "methods=password,email_otp,sms_otp", "social_providers=local"])
        guard
            case .signedIn(let existing) = try await SignupFlow(services: core.services).signup(
                SignupFlow.Registration(clientID: "app", email: "ada@example.com", password: Self.password), meta: Self.meta)
        else { Issue.record("the set-up sign-up did not sign in"); return }
        let device = P256.Signing.PrivateKey()
        let deviceID = "dev_gate_totp_1"
        let principal = try await Self.principal(existing, core: core)
        let authenticator = try await DeviceAuthenticatorsFlow(services: core.services).register(
            principal,
            DeviceAuthenticatorsFlow.Enrolment(
                type: .pin, deviceID: deviceID, publicKey: Base64URL.encode(device.publicKey.x963Representation)))
        // The authenticator app, confirmed with its first code.
        let factors = FactorsFlow(services: core.services)
        let enrolment = try await factors.enrolTOTP(principal, meta: Self.meta)
        let first = try #require(try await IndependentTOTP.code(enrolment.secret, at: core.clock.now()))
        _ = try await factors.confirm(principal, id: enrolment.id, code: first, meta: Self.meta)

        let before = core.persistence.startedCounts()
        let waiting: Waiting
        do {
            waiting = try await firstFactor(
                method, core: core, existing: existing, device: (device, deviceID, authenticator.id), idp: idp,
                factors: ["totp", "recovery_code"])
        } catch let error as GatehouseError where error.code == .mfaRequired {
            let pending = try #require(error.pendingFlow)
            #expect(pending.factors == ["totp", "recovery_code"])
            waiting = .api(pending.id)
        }
        guard waiting != .started else {
            Issue.record("\(method) started a session without the authenticator app's code")
            return
        }
        #expect(core.persistence.startedCounts() == before, "\(method) started something before the factor")
        core.clock.advance(by: 30)
        let code = try #require(try await IndependentTOTP.code(enrolment.secret, at: core.clock.now()))
        func complete() async throws {
            switch waiting {
            case .api(let id):
                _ = try await SecondFactorFlow(services: core.services).complete(
                    flowID: try #require(id), factor: "totp", response: code, meta: Self.meta)
            case .hosted(let id):
                _ = try await AuthorizeFlow(services: core.services).completeFactor(
                    id, binding: Self.binding, factor: "totp", response: code, meta: Self.meta)
            case .started: break
            }
        }
        try await complete()
        let after = core.persistence.startedCounts()
        #expect(after.total == before.total + (method == .hostedPassword || method == .hostedCode ? 2 : 1), "\(before) → \(after)")
        // Used up, and the code's step with it.
        await #expect(throws: GatehouseError.self) { try await complete() }
        #expect(core.persistence.startedCounts() == after)
    }
}
