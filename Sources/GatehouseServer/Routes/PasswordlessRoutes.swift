import GatehouseAPI
import GatehouseCore
import Hummingbird

/// One-time codes by mail and text, and magic links.
struct PasswordlessRoutes: Sendable {
    let otp: OTPFlow
    let magicLink: MagicLinkFlow

    init(services: CoreServices) {
        self.otp = OTPFlow(services: services)
        self.magicLink = MagicLinkFlow(services: services)
    }

    @Sendable func send(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(OTPRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(try await otp.send(OTPFlow.CodeRequest(body), meta: context.meta), status: .accepted)
    }

    @Sendable func verify(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(OTPVerifyRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(try await otp.verify(OTPFlow.CodeSignIn(body), meta: context.meta), noStore: true)
    }

    @Sendable func sendMagicLink(_ request: Request, context: AppRequestContext) async throws -> Response {
        var body = try await RequestDecoding.json(MagicLinkRequest.self, from: request, context: context)
        body.clientId = request.clientID(body: body.clientId)
        return try Responses.json(try await magicLink.send(MagicLinkFlow.LinkRequest(body), meta: context.meta), status: .accepted)
    }

    @Sendable func verifyMagicLink(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(MagicLinkVerifyRequest.self, from: request, context: context)
        let tokens = try await magicLink.verify(
            token: body.token, verifier: body.codeVerifier, clientID: request.clientID(body: body.clientId), scope: body.scope,
            nonce: body.nonce, meta: context.meta)
        return try Responses.json(tokens, noStore: true)
    }
}
