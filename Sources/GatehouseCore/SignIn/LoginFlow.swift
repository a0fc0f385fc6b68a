import Foundation
import GatehouseAPI

/// Email + password sign-in: the password strategy through the flow runner.
public struct LoginFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public func login(_ request: LoginRequest, meta: RequestMeta) async throws -> TokenResponse {
        try await FlowRunner(services: services).signIn(
            with: services.password,
            submission: PasswordStrategy.Submission(identifier: request.email, password: request.password),
            request: FlowRunner.SignInRequest(clientID: request.clientId, scope: request.scope, nonce: request.nonce, meta: meta))
    }
}
