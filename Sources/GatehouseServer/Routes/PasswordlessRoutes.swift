import GatehouseAPI
import GatehouseCore
import Hummingbird

/// One-time codes by mail and text, and the identifier status an app asks before choosing a method.
struct PasswordlessRoutes: Sendable {
    let otp: OTPFlow
    let status: IdentifierStatusFlow

    init(services: CoreServices) {
        self.otp = OTPFlow(services: services)
        self.status = IdentifierStatusFlow(services: services)
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

    @Sendable func identifierStatus(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = try request.queryFields()
        let answer = try await status.identifierStatus(
            email: query["email"], phone: query["phone"], clientID: request.clientID(body: query["client_id"]),
            meta: context.meta)
        return try Responses.json(answer, noStore: true)
    }
}
