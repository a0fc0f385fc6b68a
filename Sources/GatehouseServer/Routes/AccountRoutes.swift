import GatehouseAPI
import GatehouseCore
import Hummingbird

/// Sign-up and login: thin wrappers from HTTP to the flows.
struct AccountRoutes: Sendable {
    let signupFlow: SignupFlow
    let loginFlow: LoginFlow

    init(services: CoreServices) {
        self.signupFlow = SignupFlow(services: services)
        self.loginFlow = LoginFlow(services: services)
    }

    @Sendable func signup(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(SignupRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        let meta = context.meta
        switch try await signupFlow.signup(SignupFlow.Registration(body), meta: meta) {
        case .signedIn(let tokens):
            return try Responses.json(tokens, status: .created, noStore: true)
        case .verificationRequired(let user):
            return try Responses.json(SignupPendingResponse(user: user), status: .created, noStore: true)
        case .started:
            // Only the hosted page starts a browser's session.
            throw GatehouseError.internalFailure()
        }
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(LoginRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        let meta = context.meta
        return try Responses.json(try await loginFlow.login(LoginFlow.PasswordSignIn(body), meta: meta), noStore: true)
    }
}
