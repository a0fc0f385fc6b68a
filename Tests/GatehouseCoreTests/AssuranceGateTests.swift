import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import Testing

/// The assurance gate in the one place sessions start: with a second factor required, no way of
/// signing in starts an app session, a browser session or an authorization code until the factor
/// completes the waiting sign-in, and completing it starts exactly one.
@Suite("The assurance gate, on in-memory ports")
struct AssuranceGateTests {
    static let meta = RequestMeta(ipAddress: "192.0.2.20", userAgent: "gate-test")
    static let password = "correct horse battery"
    static let redirect = "com.example.gate:/callback"

    /// Every sign-in method the harness can drive without a provider's network.
    enum Method: String, CaseIterable, CustomTestStringConvertible {
        case password, signUp, mailCode, textCode, verificationCode, verificationLink, recovery, deviceAuthenticator, socialIDToken
        case socialAccessToken, socialWebCallback, hostedPassword, hostedCode, hostedSignUp, hostedProvider, webSession
        case magicLinkInApp, magicLinkInBrowser, anonymous

        var testDescription: String { rawValue }

        /// What the method starts once the factor is in.
        var starts: KeyPath<StartedCounts, Int> {
            switch self {
            case .password, .signUp, .mailCode, .textCode, .verificationCode, .recovery, .deviceAuthenticator, .socialIDToken,
                .socialAccessToken, .magicLinkInApp, .anonymous:
                \.appSessions
            case .hostedPassword, .hostedCode, .hostedSignUp, .hostedProvider, .webSession: \.browserSessions
            case .verificationLink, .socialWebCallback, .magicLinkInBrowser: \.authorizationCodes
            }
        }
    }

    @Test("A required second factor gates every sign-in method; completing it starts exactly one session", arguments: Method.allCases)
    func gate(_ method: Method) async throws {
        let fixture = try await Self.fixture()
        let (core, policy, idp, existing, device) = (fixture.core, fixture.policy, fixture.idp, fixture.existing, fixture.device)
        defer { Task { await core.stop() } }
        policy.require(for: "app")
        policy.require(for: "verified")

        let before = core.persistence.startedCounts()
        let waiting: Waiting
        do {
            waiting = try await firstFactor(method, core: core, existing: existing, device: device, idp: idp)
        } catch let error as GatehouseError where error.code == .mfaRequired {
            let pending = try #require(error.pendingFlow)
            #expect(pending.factors == ["test"])
            waiting = .api(pending.id)
        }
        guard waiting != .started else {
            Issue.record("\(method) started a session without the second factor")
            return
        }
        #expect(core.persistence.startedCounts() == before, "\(method) started something before the factor")

        let authorize = AuthorizeFlow(services: core.services)
        let factors = SecondFactorFlow(services: core.services)
        /// The session a waiting sign-in's completion started (nil for the hosted page, which goes on
        /// to the client's code).
        @discardableResult
        func complete(_ answer: String) async throws -> StartedSession? {
            switch waiting {
            case .api(let id):
                return try await factors.complete(flowID: try #require(id), factor: "test", response: answer, meta: Self.meta).signedIn
                    .started
            case .hosted(let id):
                _ = try await authorize.completeFactor(id, binding: Self.binding, factor: "test", response: answer, meta: Self.meta)
                return nil
            case .started: return nil
            }
        }
        do {
            try await complete("wrong")
            Issue.record("a wrong answer completed the sign-in")
        } catch let error as GatehouseError {
            #expect(error.code == .invalidCode)
        }
        #expect(core.persistence.startedCounts() == before)

        let started = try await complete(TestSecondFactor.answer)
        let after = core.persistence.startedCounts()
        if case .hosted = waiting {
            // The browser's session, then the client's code, whose grant carries the factor.
            #expect(after.browserSessions == before.browserSessions + 1 && after.authorizationCodes == before.authorizationCodes + 1)
            #expect(after.total == before.total + 2, "\(before) → \(after)")
        } else {
            #expect(after.total == before.total + 1, "\(before) → \(after)")
            #expect(after[keyPath: method.starts] == before[keyPath: method.starts] + 1)
        }
        switch started {
        case .app(let session)?: #expect(session.session.amr.contains("mfa") && session.session.amr.contains("test"))
        case .browser(let session, _)?: #expect(session.amr.contains("mfa") && session.amr.contains("test"))
        case .code?, nil: break
        }
        // Used up: a second completion starts nothing.
        await #expect(throws: GatehouseError.self) { try await complete(TestSecondFactor.answer) }
        #expect(core.persistence.startedCounts() == after)
    }

    /// Where a first factor left the sign-in.
    enum Waiting: Equatable {
        /// `mfa_required` named the waiting flow.
        case api(UUID?)
        /// The hosted authorization waits on its factor page.
        case hosted(UUID)
        case started
    }

    @Test("A waiting sign-in takes a bounded number of wrong answers, then is gone")
    func boundedAttempts() async throws {
        let core = try await CoreHarness.start(assurance: RequireTestFactor(clients: ["app"]), factors: [TestSecondFactor()])
        defer { Task { await core.stop() } }
        try await core.createClient(id: "app", settings: ["email_verification=off"])
        var flowID: UUID?
        do {
            _ = try await SignupFlow(services: core.services).signup(
                SignupFlow.Registration(clientID: "app", email: "bob@example.com", password: Self.password), meta: Self.meta)
        } catch let error as GatehouseError where error.code == .mfaRequired {
            flowID = error.pendingFlow?.id
        }
        let id = try #require(flowID)
        let factors = SecondFactorFlow(services: core.services)
        for _ in 0..<SecondFactorFlow.maxAttempts {
            await #expect(throws: GatehouseError.self) {
                try await factors.complete(flowID: id, factor: "test", response: "no", meta: Self.meta)
            }
        }
        do {
            _ = try await factors.complete(flowID: id, factor: "test", response: TestSecondFactor.answer, meta: Self.meta)
            Issue.record("the right answer after the limit completed the sign-in")
        } catch let error as GatehouseError {
            #expect(error.code == .flowExpired)
        }
        #expect(core.persistence.startedCounts().appSessions == 0)
    }

    @Test("Without a requirement every method starts its session at once, and no sign-in waits", arguments: Method.allCases)
    func noRequirement(_ method: Method) async throws {
        let fixture = try await Self.fixture()
        defer { Task { await fixture.core.stop() } }
        let before = fixture.core.persistence.startedCounts()
        let waiting = try await firstFactor(
            method, core: fixture.core, existing: fixture.existing, device: fixture.device, idp: fixture.idp)
        #expect(waiting == .started)
        let after = fixture.core.persistence.startedCounts()
        #expect(after[keyPath: method.starts] == before[keyPath: method.starts] + 1, "\(before) → \(after)")
    }

    /// Two clients, an account made before any requirement with an app session, and a device key of it.
    struct Fixture {
        var core: CoreHarness
        var policy: RequireTestFactor
        var idp: TestIDTokenIssuer
        var existing: TokenResponse
        var device: (key: P256.Signing.PrivateKey, id: String, authenticator: String)
    }

    /// `factor`: what the policy asks for, the test factor or a real one the harness then offers
    /// (`passkey`, with the harness's own secret).
    static func fixture(factor: String = "test") async throws -> Fixture {
        let policy = RequireTestFactor(clients: [], factor: factor)
        let idp = TestIDTokenIssuer()
        let clock = TestClock()
        let core =
            factor == PasskeyFactor.factorID
            ? try await CoreHarness.start(
                assurance: policy,
                factors: { secret, clock in
                    [
                        TestSecondFactor(),
                        PasskeyFactor(
                            secret: secret, relyingParty: PasskeySettings().relyingParty(publicURL: CoreHarness.publicURL), clock: clock),
                    ]
                }, social: Self.social(idp, clock: clock), clock: clock)
            : try await CoreHarness.start(
                assurance: policy, factors: [TestSecondFactor()], social: Self.social(idp, clock: clock), clock: clock)
        try await core.createClient(
            id: "app", redirectURIs: [Self.redirect],
            settings: ["email_verification=off", "methods=password,email_otp,sms_otp", "social_providers=local", "anonymous=on"])
        try await core.createClient(id: "verified", redirectURIs: [Self.redirect])
        guard
            case .signedIn(let existing) = try await SignupFlow(services: core.services).signup(
                SignupFlow.Registration(clientID: "app", email: "ada@example.com", password: Self.password), meta: Self.meta)
        else { throw GatehouseError.internalFailure() }
        let device = P256.Signing.PrivateKey()
        let authenticator = try await DeviceAuthenticatorsFlow(services: core.services).register(
            try await Self.principal(existing, core: core),
            DeviceAuthenticatorsFlow.Enrolment(
                type: .pin, deviceID: "dev_gate_test_1", publicKey: Base64URL.encode(device.publicKey.x963Representation)))
        return Fixture(core: core, policy: policy, idp: idp, existing: existing, device: (device, "dev_gate_test_1", authenticator.id))
    }

    // MARK: The first factor of each method

    func firstFactor(
        _ method: Method, core: CoreHarness, existing: TokenResponse,
        device: (key: P256.Signing.PrivateKey, id: String, authenticator: String),
        idp: TestIDTokenIssuer, factors expected: [String] = ["test"]
    ) async throws -> Waiting {
        let services = core.services
        switch method {
        case .password:
            _ = try await LoginFlow(services: services).login(
                LoginFlow.PasswordSignIn(clientID: "app", email: "ada@example.com", password: Self.password), meta: Self.meta)
        case .signUp:
            _ = try await SignupFlow(services: services).signup(
                SignupFlow.Registration(clientID: "app", email: "new@example.com", password: Self.password), meta: Self.meta)
        case .mailCode, .textCode:
            let (email, phone) = method == .mailCode ? ("ada@example.com", nil) : (nil, "+4791234567")
            let otp = OTPFlow(services: services)
            _ = try await otp.send(OTPFlow.CodeRequest(clientID: "app", email: email, phone: phone), meta: Self.meta)
            let code = try #require(try await core.outboxVariables(to: email ?? phone!, kind: "otp").last?["code"])
            _ = try await otp.verify(OTPFlow.CodeSignIn(clientID: "app", email: email, phone: phone, code: code), meta: Self.meta)
        case .verificationCode:
            _ = try await SignupFlow(services: services).signup(
                SignupFlow.Registration(clientID: "verified", email: "grace@example.com", password: Self.password), meta: Self.meta)
            let code = try #require(try await core.outboxVariables(to: "grace@example.com", kind: "verification").last?["code"])
            _ = try await VerificationFlow(services: services).verify(
                email: "grace@example.com", code: code, clientID: "verified", meta: Self.meta)
        case .verificationLink:
            var signup = SignupFlow.Registration(clientID: "verified", email: "lin@example.com", password: Self.password)
            signup.redirectTo = Self.redirect
            signup.codeChallenge = Self.challenge
            signup.codeChallengeMethod = "S256"
            _ = try await SignupFlow(services: services).signup(signup, meta: Self.meta)
            let link = try #require(try await core.outboxVariables(to: "lin@example.com", kind: "verification").last?["link"])
            let token = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "token" }?.value)
            let outcome = try await VerificationFlow(services: services).followLink(token: token, binding: "gh_flow_test")
            // The app learns of the waiting sign-in from its redirect, as `error` and `flow_id`.
            guard case .redirect(let url) = outcome, let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems,
                items.first(where: { $0.name == "error" })?.value == "mfa_required"
            else { return .started }
            #expect(items.first { $0.name == "factors" }?.value == "test")
            return .api(items.first { $0.name == "flow_id" }?.value.flatMap(UUID.init(uuidString:)))
        case .recovery:
            let recovery = RecoveryFlow(services: services)
            _ = try await recovery.request(email: "ada@example.com", clientID: "app", meta: Self.meta)
            let code = try #require(try await core.outboxVariables(to: "ada@example.com", kind: "recovery").last?["code"])
            _ = try await recovery.verify(email: "ada@example.com", code: code, token: nil, clientID: "app", meta: Self.meta)
        case .hostedPassword, .hostedCode, .hostedSignUp, .hostedProvider:
            let authorize = AuthorizeFlow(services: services)
            let binding = Self.binding
            guard
                case .show(let flow) = try await authorize.begin(Self.authorizeParameters, browser: nil, binding: binding, meta: Self.meta)
            else {
                Issue.record("the authorization did not show its sign-in page")
                return .started
            }
            let outcome: AuthorizeFlow.Outcome?
            switch method {
            case .hostedPassword:
                outcome = try await authorize.signIn(
                    flow, binding: binding, email: "ada@example.com", password: Self.password, browser: nil, meta: Self.meta
                ).0
            case .hostedProvider:
                let web = SocialWebFlow(services: services)
                let started = try await web.startHosted(providerID: "local", authorizeFlowID: flow, clientID: "app", meta: Self.meta)
                // The provider's code is the nonce it was asked for (see ``ScriptedFederation``).
                let answer = try await web.callback(
                    providerID: "local",
                    .init(
                        state: started.flowID.uuidString, code: try Self.nonce(in: started.providerURL), error: nil,
                        browserToken: started.browserToken, appleUser: nil, meta: Self.meta, hostedBinding: binding))
                guard case .hosted(let hosted, _) = answer else {
                    Issue.record("the provider's callback did not go on with the hosted flow: \(answer)")
                    return .started
                }
                outcome = hosted
            case .hostedCode:
                _ = try await authorize.sendCode(flow, binding: binding, identifier: "ada@example.com", meta: Self.meta)
                let code = try #require(try await core.outboxVariables(to: "ada@example.com", kind: "otp").last?["code"])
                outcome = try await authorize.verifyCode(
                    flow, binding: binding, identifier: "ada@example.com", code: code, browser: nil, meta: Self.meta
                ).0
            default:
                outcome = try await authorize.signUp(
                    flow, binding: binding, email: "page@example.com", password: Self.password, acceptTerms: false, browser: nil,
                    meta: Self.meta)?.0
            }
            // The flow waits on its factor page: the same flow, at its second-factor step.
            guard case .show(let shown)? = outcome, shown == flow else { return .started }
            let page = try await authorize.page(flow, binding: binding, browser: nil)
            #expect(page.flow.step == .secondFactor && page.factors == expected)
            return .hosted(flow)
        case .deviceAuthenticator:
            let flow = DeviceAuthenticationFlow(services: services)
            let challenge = try await flow.challenge(
                DeviceAuthenticationFlow.ChallengeRequest(clientID: "app", authenticatorID: device.authenticator), meta: Self.meta)
            let message = DeviceSignature.message(
                challengeID: challenge.challengeId, challenge: challenge.challenge, clientID: "app", deviceID: device.id,
                authenticatorID: device.authenticator)
            let signature = Base64URL.encode(try device.key.signature(for: message).rawRepresentation)
            _ = try await flow.authenticate(
                DeviceAuthenticationFlow.Answer(clientID: "app", challengeID: challenge.challengeId, signature: signature), meta: Self.meta)
        case .socialIDToken:
            let nonce = "n-" + UUID().uuidString
            let token = try idp.token(
                idp.claims(subject: "s-1", audience: "gate-app", nonce: nonce, email: "ida@example.com", now: core.clock.now()))
            _ = try await SocialSignInFlow(services: services).signIn(
                .init(providerID: "local", idToken: token, nonce: nonce, clientID: "app", meta: Self.meta))
        case .socialAccessToken:
            _ = try await SocialSignInFlow(services: services).signIn(
                .init(providerID: "local", accessToken: "at-ida", clientID: "app", meta: Self.meta))
        case .socialWebCallback:
            let web = SocialWebFlow(services: services)
            let started = try await web.start(
                providerID: "local", clientID: "app", redirectTo: Self.redirect, codeChallenge: Self.challenge, challengeMethod: "S256",
                state: "app-state", meta: Self.meta)
            let answer = try await web.callback(
                providerID: "local",
                .init(
                    state: started.flowID.uuidString, code: try Self.nonce(in: started.providerURL), error: nil,
                    browserToken: started.browserToken, appleUser: nil, meta: Self.meta))
            guard case .redirect(let url) = answer, let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems else {
                return .started
            }
            // The app learns of the waiting sign-in from its redirect, as `error` and `flow_id`.
            guard items.first(where: { $0.name == "error" })?.value == "mfa_required" else { return .started }
            #expect(items.first { $0.name == "state" }?.value == "app-state")
            return .api(items.first { $0.name == "flow_id" }?.value.flatMap(UUID.init(uuidString:)))
        case .magicLinkInApp, .magicLinkInBrowser:
            let flow = MagicLinkFlow(services: services)
            _ = try await flow.send(
                MagicLinkFlow.LinkRequest(
                    clientID: "app", email: "ada@example.com", redirectTo: Self.redirect, codeChallenge: Self.challenge,
                    codeChallengeMethod: "S256"), meta: Self.meta)
            let link = try #require(try await core.outboxVariables(to: "ada@example.com", kind: "magic_link").last?["link"])
            let token = try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "token" }?.value)
            guard method == .magicLinkInBrowser else {
                _ = try await flow.verify(token: token, verifier: Self.verifier, clientID: "app", scope: nil, nonce: nil, meta: Self.meta)
                return .started
            }
            // As the verification link: the app learns of the waiting sign-in from its redirect.
            guard case .redirect(let url) = try await flow.followLink(token: token, meta: Self.meta),
                let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems,
                items.first(where: { $0.name == "error" })?.value == "mfa_required"
            else { return .started }
            #expect(items.first { $0.name == "factors" }?.value == "test")
            return .api(items.first { $0.name == "flow_id" }?.value.flatMap(UUID.init(uuidString:)))
        case .anonymous:
            _ = try await AnonymousAccountsFlow(services: services).signIn(clientID: "app", meta: Self.meta)
        case .webSession:
            let web = WebSessionFlow(services: services)
            let url = try await web.create(try await Self.principal(existing, core: core), redirectTo: nil, meta: Self.meta)
            let token = try #require(URLComponents(string: url.url)?.queryItems?.first { $0.name == "token" }?.value)
            _ = try await web.open(token: token, current: nil, meta: Self.meta)
        }
        return .started
    }

    static let binding = "gh_flow_test"
}
