import GatehouseAPI
import GatehouseCore
import Hummingbird

/// Email verification and password recovery over JSON.
struct VerificationRoutes: Sendable {
    let verification: VerificationFlow
    let recovery: RecoveryFlow

    init(services: CoreServices) {
        self.verification = VerificationFlow(services: services)
        self.recovery = RecoveryFlow(services: services)
    }

    @Sendable func resend(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(VerificationResendRequest.self, from: request, context: context)
        let sent = try await verification.resend(email: body.email, clientID: request.clientID(body: body.clientId), meta: context.meta)
        return try Responses.json(sent, status: .accepted)
    }

    @Sendable func verify(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(CodeVerificationRequest.self, from: request, context: context)
        let tokens: TokenResponse
        if let token = body.token, !token.isEmpty {
            tokens = try await verification.verify(token: token, meta: context.meta)
        } else if let email = body.email, let code = body.code {
            tokens = try await verification.verify(
                email: email, code: code, clientID: request.clientID(body: body.clientId), meta: context.meta)
        } else {
            throw GatehouseError.validation(field: nil, code: .required, message: "Send email and code, or token.")
        }
        return try Responses.json(tokens, noStore: true)
    }

    @Sendable func requestRecovery(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(RecoveryRequest.self, from: request, context: context)
        let sent = try await recovery.request(email: body.email, clientID: request.clientID(body: body.clientId), meta: context.meta)
        return try Responses.json(sent, status: .accepted)
    }

    @Sendable func verifyRecovery(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(CodeVerificationRequest.self, from: request, context: context)
        let tokens = try await recovery.verify(
            email: body.email, code: body.code, token: body.token, clientID: request.clientID(body: body.clientId),
            meta: context.meta)
        return try Responses.json(tokens, noStore: true)
    }
}
