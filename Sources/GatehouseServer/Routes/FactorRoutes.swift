import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

/// Second factors: completing a sign-in that answered `mfa_required`, and the signed-in user's
/// authenticator app and recovery codes.
struct FactorRoutes: Sendable {
    let services: CoreServices
    let completion: SecondFactorFlow
    let factors: FactorsFlow

    init(services: CoreServices) {
        self.services = services
        self.completion = SecondFactorFlow(services: services)
        self.factors = FactorsFlow(services: services)
    }

    /// `POST /v1/mfa/verify`: an app session's tokens, or, for a web flow's sign-in, the code its
    /// redirect would have carried.
    @Sendable func verify(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(SecondFactorRequest.self, from: request, context: context)
        var problems = ValidationResult()
        let flowID = UUID(uuidString: body.flowId)
        if flowID == nil {
            problems.invalidate(field: "flow_id", code: .invalidFormat, message: "Send the flow_id of the mfa_required answer.")
        }
        // A passkey answers with its credential, which goes to the factor as its JSON.
        var response = body.code
        if body.factor == PasskeyFactor.factorID {
            if let credential = body.credential {
                response = String(decoding: try JSONEncoder().encode(credential), as: UTF8.self)
            } else {
                problems.invalidate(field: "credential", code: .required, message: "Send the passkey's answer to the challenge.")
            }
        } else if body.code.isEmpty || body.code.count > 64 {
            problems.invalidate(field: "code", code: .invalidFormat, message: "Send the code: 1 to 64 characters.")
        }
        if body.factor.isEmpty || body.factor.count > 32 {
            problems.invalidate(field: "factor", code: .invalidValue, message: "Name one of the factors the answer listed.")
        }
        guard problems.isValid, let flowID else { throw GatehouseError.validation(problems) }
        let completed = try await completion.complete(flowID: flowID, factor: body.factor, response: response, meta: context.meta)
        let signedIn = completed.signedIn
        switch completed.target {
        case .app(let app):
            let started = try signedIn.started.app()
            var tokens = try await services.issuer.response(
                session: started.session, refreshToken: started.refreshToken, client: signedIn.client, user: signedIn.user,
                isNew: signedIn.isNew, nonce: app.nonce)
            tokens.recoveryCodes = completed.recoveryCodes
            return try Responses.json(tokens, noStore: true)
        case .authorizationCode:
            return try Responses.json(
                SecondFactorCodeResponse(code: try signedIn.started.code(), recoveryCodes: completed.recoveryCodes), noStore: true)
        case .browser:
            // The hosted page keeps its waiting sign-ins' ids to itself and completes them on its own form.
            throw GatehouseError.flowExpired
        }
    }

    /// `POST /v1/mfa/passkey/options`: the challenge a passkey answers to complete a waiting sign-in.
    @Sendable func passkeyOptions(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(SecondFactorPasskeyRequest.self, from: request, context: context)
        guard let flowID = UUID(uuidString: body.flowId) else {
            throw GatehouseError.validation(field: "flow_id", code: .invalidFormat, message: "Send the flow_id of the mfa_required answer.")
        }
        return try Responses.json(try await completion.passkeyOptions(flowID: flowID), noStore: true)
    }

    /// `POST /v1/mfa/enrol`: an authenticator app for a sign-in that requires a factor the user lacks.
    @Sendable func enrolPending(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(SecondFactorEnrolRequest.self, from: request, context: context)
        guard let flowID = UUID(uuidString: body.flowId) else {
            throw GatehouseError.validation(field: "flow_id", code: .invalidFormat, message: "Send the flow_id of the mfa_required answer.")
        }
        return try Responses.json(try await completion.enrol(flowID: flowID), status: .created, noStore: true)
    }

    /// `POST /v1/mfa/send`: a code by mail or text for a waiting sign-in that offers one.
    @Sendable func sendCode(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(SecondFactorSendRequest.self, from: request, context: context)
        guard let flowID = UUID(uuidString: body.flowId) else {
            throw GatehouseError.validation(field: "flow_id", code: .invalidFormat, message: "Send the flow_id of the mfa_required answer.")
        }
        guard !body.factor.isEmpty, body.factor.count <= 32 else {
            throw GatehouseError.validation(field: "factor", code: .invalidValue, message: "Name a code factor the answer listed.")
        }
        return try Responses.json(
            try await completion.sendCode(flowID: flowID, factor: body.factor, meta: context.meta), status: .accepted, noStore: true)
    }

    @Sendable func list(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await factors.list(context.principal), noStore: true)
    }

    @Sendable func enrolTOTP(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await factors.enrolTOTP(context.principal, meta: context.meta), status: .created, noStore: true)
    }

    @Sendable func confirm(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let id = try Self.factorID(context.parameters.get("id"))
        let body = try await RequestDecoding.json(FactorConfirmRequest.self, from: request, context: context)
        guard !body.code.isEmpty, body.code.count <= 64 else {
            throw GatehouseError.validation(field: "code", code: .invalidFormat, message: "Send the app's 6-digit code.")
        }
        return try Responses.json(try await factors.confirm(context.principal, id: id, code: body.code, meta: context.meta), noStore: true)
    }

    @Sendable func remove(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try await factors.remove(context.principal, id: try Self.factorID(context.parameters.get("id")), meta: context.meta)
        return Responses.noContent()
    }

    @Sendable func regenerateRecoveryCodes(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await factors.regenerateRecoveryCodes(context.principal, meta: context.meta), noStore: true)
    }

    private static func factorID(_ raw: String?) throws -> String {
        guard let raw, !raw.isEmpty, raw.count <= 64 else { throw GatehouseError.notFound("No such factor.") }
        return raw
    }
}
