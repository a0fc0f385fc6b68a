import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `/userinfo` (OIDC Core §5.3) and the user's consents.
struct UserInfoRoutes: Sendable {
    let consents: ConsentsFlow
    let clients: ClientResolver
    let tokens: AccessTokens

    init(services: CoreServices) {
        self.consents = ConsentsFlow(services: services)
        self.clients = services.clients
        self.tokens = services.tokens
    }

    /// The claims the access token's scopes release; an access token without `openid` gets 403
    /// `insufficient_scope` (RFC 6750 §3.1).
    @Sendable func userInfo(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        let scopes = context.principal.session.scopes
        guard scopes.contains("openid") else {
            var response = try Responses.json(
                ["error": "insufficient_scope", "error_description": "The token lacks the openid scope."], status: .forbidden, noStore: true
            )
            response.headers[.wwwAuthenticate] = #"Bearer error="insufficient_scope", scope="openid""#
            return response
        }
        let client = try await clients.resolve(context.principal.session.clientID)
        var info = UserInfo(
            sub: tokens.subjects.subject(of: context.principal.user.id, for: client),
            claims: UserClaims(
                user: context.principal.user, scopes: scopes, requested: context.principal.session.requestedClaims?.userinfo ?? []))
        // A client that registered `userinfo_signed_response_alg` gets a JWT (OIDC Core §5.3.2), with
        // `iss` and `aud` so it cannot be replayed to another client as its own.
        guard let algorithm = client.settings.userinfoSigningAlgorithm else { return try Responses.json(info, noStore: true) }
        info.issuer = tokens.issuer
        info.audience = client.id
        let jwt = try tokens.sign(info, typ: "JWT", algorithm: algorithm)
        return Responses.raw(Data(jwt.utf8), contentType: "application/jwt", noStore: true)
    }

    @Sendable func listConsents(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        try Responses.json(try await consents.list(context.principal), noStore: true)
    }

    @Sendable func revokeConsent(_ request: Request, context: AuthenticatedContext) async throws -> Response {
        guard let clientID = context.parameters.get("client_id"), !clientID.isEmpty else {
            throw GatehouseError.notFound("No such consent.")
        }
        try await consents.revoke(context.principal, clientID: clientID)
        return Responses.noContent()
    }

    struct UserInfo: Encodable {
        var sub: String
        var claims: UserClaims
        var issuer: String?
        var audience: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(sub, forKey: .sub)
            try c.encodeIfPresent(issuer, forKey: .iss)
            try c.encodeIfPresent(audience, forKey: .aud)
            try claims.encode(to: encoder)
        }

        enum Key: String, CodingKey { case sub, iss, aud }
    }
}
