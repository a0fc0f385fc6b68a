import GatehouseAPI
import GatehouseCore
import Hummingbird

/// One-time codes by mail and text.
struct PasswordlessRoutes: Sendable {
    let otp: OTPFlow

    init(services: CoreServices) { self.otp = OTPFlow(services: services) }

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
}
