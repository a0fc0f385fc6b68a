import Foundation
import GatehouseAPI

/// Signing in with a passkey, usernameless: a single-use challenge kept in a flow, then the
/// authenticator's assertion through the flow runner with ``PasskeyStrategy``. The checks that do not
/// depend on the credential come first and say what failed (400 `invalid_passkey`); a credential that
/// is unknown or whose signature does not hold is `invalid_credentials`, like any sign-in.
public struct PasskeySignInFlow: Sendable {
    let services: CoreServices
    let runner: FlowRunner
    let strategy = PasskeyStrategy()

    /// Long enough for the browser's account picker and a biometric prompt.
    public static let challengeLifetime: TimeInterval = 300

    public init(services: CoreServices) {
        self.services = services
        self.runner = FlowRunner(services: services)
    }

    /// Whether `client` offers passkeys (`methods` holds `passkey`).
    static func requireEnabled(_ client: ClientRecord) throws {
        guard client.settings.methods.contains("passkey") else {
            throw GatehouseError.methodNotEnabled("Passkeys are not enabled for this client.")
        }
    }

    public func options(clientID: String?, meta: RequestMeta) async throws -> PasskeyRequestOptions {
        let client = try await services.clients.resolve(clientID)
        try Self.requireEnabled(client)
        let challenge = Base64URL.encode(Secrets.randomBytes(32))
        let begun = try await runner.begin(
            .passkeyChallenge, client: client, nonce: challenge, lifetime: Self.challengeLifetime, meta: meta)
        let party = services.relyingParty
        return PasskeyRequestOptions(
            flowId: begun.flow.id.uuidString.lowercased(), expiresIn: Int(Self.challengeLifetime),
            publicKey: PublicKeyCredentialRequestOptions(
                challenge: challenge, rpId: party.id, timeout: Int(Self.challengeLifetime) * 1000, allowCredentials: [],
                userVerification: UserVerificationRequirement.required.rawValue))
    }

    public func authenticate(_ request: PasskeyAuthenticationRequest, meta: RequestMeta) async throws -> TokenResponse {
        let client = try await services.clients.resolve(request.clientId)
        try Self.requireEnabled(client)
        let (submission, _) = try await prepare(request.flowId, credential: request.credential, client: client, meta: meta)
        return try await runner.signIn(
            with: strategy, submission: submission, request: .init(clientID: client.id, scope: request.scope, meta: meta))
    }

    /// The challenge's flow used up (one answer per challenge, right or wrong), and the response's own
    /// checks passed: what the strategy needs to check it against the credential.
    func prepare(
        _ flowID: String, credential: AuthenticationCredential, client: ClientRecord, meta: RequestMeta
    ) async throws -> (PasskeyStrategy.Submission, FlowRecord) {
        let assertion = try PasskeyWire.assertion(credential)
        guard let id = UUID(uuidString: flowID) else { throw GatehouseError.challengeExpired }
        let flow: FlowRecord
        do {
            flow = try await runner.complete(id, meta: meta)
        } catch let error as GatehouseError where error.code == .flowExpired {
            throw GatehouseError.challengeExpired
        }
        guard flow.kind == .passkeyChallenge, flow.clientID == client.id, let nonce = flow.nonce, let challenge = Base64URL.decode(nonce)
        else { throw GatehouseError.challengeExpired }
        return (try Self.submission(assertion, challenge: challenge, services: services), flow)
    }

    /// A usernameless sign-in's answer to `challenge`, past the checks that need no credential (each
    /// failure a 400 naming it), ready for the strategy. Shared with the hosted sign-in page.
    static func submission(
        _ assertion: PasskeyCeremony.Assertion, challenge: [UInt8], services: CoreServices
    ) throws -> PasskeyStrategy.Submission {
        let expectation = PasskeyCeremony.Expectation(challenge: challenge, userVerification: .required)
        do {
            _ = try PasskeyCeremony.precheck(assertion, expecting: expectation, relyingParty: services.relyingParty)
        } catch {
            throw GatehouseError.invalidPasskey(error)
        }
        guard assertion.userHandle != nil else {
            throw GatehouseError.invalidPasskey(.refused("a usernameless sign-in needs the credential's user handle"))
        }
        return PasskeyStrategy.Submission(
            assertion: assertion, expectation: expectation, relyingParty: services.relyingParty, now: services.clock.now())
    }
}

extension FlowKind {
    /// A passkey sign-in's challenge: single use, five minutes.
    public static let passkeyChallenge = FlowKind(rawValue: "passkey_challenge")
    /// A passkey registration's challenge, bound to the signed-in user.
    public static let passkeyRegistration = FlowKind(rawValue: "passkey_registration")
}
