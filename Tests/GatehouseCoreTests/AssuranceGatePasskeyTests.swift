import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import Testing

/// The assurance gate with a real factor: a passkey (python-fido2's assertion) as the required second
/// step of every sign-in method that signs in the account holding it.
@Suite("The assurance gate with a passkey as the required factor")
struct AssuranceGatePasskeyTests {
    /// The methods that sign in the fixture's existing account, the one that holds the passkey (the
    /// others make a new account, which has none).
    static let methods: [AssuranceGateTests.Method] = [
        .password, .mailCode, .recovery, .deviceAuthenticator, .hostedPassword, .hostedCode, .webSession,
    ]

    @Test(
        "GATE-3: with a passkey as the required factor, password, mail code, recovery, device authenticator, hosted password, hosted code and web-session sign-ins start nothing until the waiting sign-in's passkey challenge is answered; a wrong answer starts nothing; the passkey's assertion starts exactly one session carrying hwk and mfa; a second completion starts nothing",
        arguments: methods)
    func gate(_ method: AssuranceGateTests.Method) async throws {
        guard await IndependentAuthenticator.isAvailable() else {
            print("GATE-3 skipped: python-fido2 and cryptography are not installed (pip install fido2 cryptography)")
            return
        }
        let fixture = try await AssuranceGateTests.fixture(factor: PasskeyFactor.factorID)
        let core = fixture.core
        defer { Task { await core.stop() } }
        let party = core.services.relyingParty
        let origin = CoreHarness.publicURL

        // The account's passkey, made by python-fido2 and checked as a registration is.
        let user = try #require(try await core.persistence.read { try await $0.users.find(email: "ada@example.com") })
        let registrationChallenge = Secrets.randomBytes(32)
        let made = try await IndependentAuthenticator.create([
            .create(rpID: party.id, origin: origin, challenge: Base64URL.encode(registrationChallenge))
        ])[0]
        let verified = try await PasskeyCeremony.verify(
            PasskeyCeremony.Registration(
                credentialID: try #require(Base64URL.decode(made.credentialID)),
                clientDataJSON: try #require(Base64URL.decode(made.response["clientDataJSON"] ?? "")),
                attestationObject: try #require(Base64URL.decode(made.response["attestationObject"] ?? ""))),
            expecting: .init(challenge: registrationChallenge, userVerification: .required), relyingParty: party)
        let config = PasskeyStrategy.Config(
            publicKey: Base64URL.encode(verified.publicKeyBytes), algorithm: verified.publicKey.algorithm.rawValue, signCount: 0,
            userHandle: Base64URL.encode(Secrets.randomBytes(32)), name: "gate", backupEligible: false, backedUp: false, transports: [],
            aaguid: nil, format: verified.format, trust: verified.trust, lastUsedAt: nil, flagged: nil)
        let now = core.clock.now()
        try await core.persistence.transaction { stores in
            try await stores.credentials.insert(
                CredentialRecord(
                    userID: user.id, type: .passkey, identifiers: [made.credentialID], config: try CredentialRecord.encodeConfig(config),
                    createdAt: now))
        }
        fixture.policy.require(for: "app")
        fixture.policy.require(for: "verified")

        let before = core.persistence.startedCounts()
        let waiting: AssuranceGateTests.Waiting
        do {
            waiting = try await AssuranceGateTests().firstFactor(
                method, core: core, existing: fixture.existing, device: fixture.device, idp: fixture.idp,
                factors: [PasskeyFactor.factorID])
        } catch let error as GatehouseError where error.code == .mfaRequired {
            let pending = try #require(error.pendingFlow)
            #expect(pending.factors == [PasskeyFactor.factorID])
            waiting = .api(pending.id)
        }
        #expect(core.persistence.startedCounts() == before, "\(method) started something before the factor")

        // The waiting sign-in's own challenge, as its options (or its factor page) give it.
        let challenge: String
        switch waiting {
        case .api(let id):
            challenge = try await SecondFactorFlow(services: core.services).passkeyOptions(flowID: try #require(id)).publicKey.challenge
        case .hosted(let id):
            let page = try await AuthorizeFlow(services: core.services).page(id, binding: AssuranceGateTests.binding, browser: nil)
            challenge = try #require(page.passkeyOptions?.challenge)
        case .started:
            Issue.record("\(method) started a session without the second factor")
            return
        }
        var spec = IndependentAuthenticator.Spec.get(rpID: party.id, origin: origin, challenge: challenge, credential: made, signCount: 1)
        spec.uv = false
        let assertion = try await IndependentAuthenticator.get([spec])[0].response
        let credential = AuthenticationCredential(
            id: made.credentialID, rawId: made.credentialID,
            response: .init(
                clientDataJSON: assertion["clientDataJSON"]!!, authenticatorData: assertion["authenticatorData"]!!,
                signature: assertion["signature"]!!, userHandle: nil))
        let answer = String(decoding: try JSONEncoder().encode(credential), as: UTF8.self)

        @discardableResult
        func complete(_ response: String) async throws -> StartedSession? {
            switch waiting {
            case .api(let id):
                return try await SecondFactorFlow(services: core.services).complete(
                    flowID: try #require(id), factor: PasskeyFactor.factorID, response: response, meta: AssuranceGateTests.meta
                ).signedIn.started
            case .hosted(let id):
                _ = try await AuthorizeFlow(services: core.services).completeFactor(
                    id, binding: AssuranceGateTests.binding, factor: PasskeyFactor.factorID, response: response,
                    meta: AssuranceGateTests.meta)
                return nil
            case .started: return nil
            }
        }
        await #expect(throws: GatehouseError.self) { try await complete("wrong") }
        #expect(core.persistence.startedCounts() == before)

        let started = try await complete(answer)
        let after = core.persistence.startedCounts()
        if case .hosted = waiting {
            #expect(after.total == before.total + 2, "\(before) → \(after)")
        } else {
            #expect(after.total == before.total + 1, "\(before) → \(after)")
        }
        switch started {
        case .app(let session)?: #expect(session.session.amr.contains("mfa") && session.session.amr.contains("hwk"))
        case .browser(let session, _)?: #expect(session.amr.contains("mfa") && session.amr.contains("hwk"))
        case .code?, nil: break
        }
        await #expect(throws: GatehouseError.self) { try await complete(answer) }
        #expect(core.persistence.startedCounts() == after)
    }
}
