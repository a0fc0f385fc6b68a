import Foundation
import GatehouseAPI

/// Email + password sign-in: the password strategy through the flow runner.
public struct LoginFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// A password sign-in as the core takes it.
    public struct PasswordSignIn: Sendable {
        public var clientID: String?
        public var email: String
        public var password: String
        public var scope: String?
        public var nonce: String?

        public init(clientID: String?, email: String, password: String, scope: String? = nil, nonce: String? = nil) {
            self.clientID = clientID
            self.email = email
            self.password = password
            self.scope = scope
            self.nonce = nonce
        }
    }

    public func login(_ request: PasswordSignIn, meta: RequestMeta) async throws -> TokenResponse {
        try await FlowRunner(services: services).signIn(
            with: services.password,
            submission: PasswordStrategy.Submission(identifier: request.email, password: request.password),
            request: FlowRunner.SignInRequest(clientID: request.clientID, scope: request.scope, nonce: request.nonce, meta: meta))
    }
}
