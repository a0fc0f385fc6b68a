import Foundation
import GatehouseAPI

/// The sign-in page's passkey: the button and autofill (conditional mediation) answer the page's own
/// challenge, derived from the hosted flow's id under the server secret. The flow leaves its sign-in
/// step once, and is bound to its browser, so an assertion signs in at most once and only there; the
/// page needs no row of its own per view.
extension AuthorizeFlow {
    /// The challenge of the sign-in page of flow `id`.
    public static func passkeyChallenge(for id: UUID, secret: ServerSecret) -> [UInt8] {
        Base64URL.decode(secret.csrfToken(for: "passkey-signin:" + id.uuidString.lowercased())) ?? []
    }

    /// What the page hands `navigator.credentials.get`: usernameless, user verification required.
    public func passkeyOptions(for id: UUID) -> PublicKeyCredentialRequestOptions {
        PublicKeyCredentialRequestOptions(
            challenge: Base64URL.encode(Self.passkeyChallenge(for: id, secret: services.secret)), rpId: services.relyingParty.id,
            timeout: Int(PasskeySignInFlow.challengeLifetime) * 1000, allowCredentials: [],
            userVerification: UserVerificationRequirement.required.rawValue)
    }

    /// Signs the browser in with the page's passkey answer (`AuthenticationResponseJSON`, as the page's
    /// script posts it).
    public func signIn(
        _ id: UUID, binding: String, passkey json: String, browser: BrowserPrincipal?, meta: RequestMeta
    ) async throws -> (Outcome, cookie: String?) {
        let (flow, state, _) = try await load(id, binding: binding, step: .started)
        let client = try await services.clients.resolve(flow.clientID)
        try PasskeySignInFlow.requireEnabled(client)
        guard json.utf8.count <= 32 * 1024, let wire = try? JSONDecoder().decode(AuthenticationCredential.self, from: Data(json.utf8))
        else { throw GatehouseError.invalidPasskey(.malformed("the page's answer is not an AuthenticationResponseJSON")) }
        let submission = try PasskeySignInFlow.submission(
            try PasskeyWire.assertion(wire), challenge: Self.passkeyChallenge(for: id, secret: services.secret), services: services)
        return try await authenticated(flow, state) {
            try await FlowRunner(services: services).signIn(
                with: PasskeyStrategy(), submission: submission, request: FlowRunner.SignInRequest(clientID: flow.clientID, meta: meta),
                target: browserTarget(flow, browser))
        }
    }
}
