import GatehouseAPI
import GatehouseCore
import Hummingbird

/// Sign-in with a social provider's ID token: HTTP in, ``SocialSignInFlow``, token response out.
struct SocialRoutes: Sendable {
    let flow: SocialSignInFlow

    init(services: CoreServices) { self.flow = SocialSignInFlow(services: services) }

    @Sendable func token(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await RequestDecoding.json(SocialTokenRequest.self, from: request, context: context)
        guard let provider = context.parameters.get("provider"), SocialProvider.isValidID(provider) else {
            throw GatehouseError.providerNotEnabled
        }
        let tokens = try await flow.signIn(
            SocialSignInFlow.Request(
                providerID: provider, idToken: body.idToken, nonce: body.nonce, clientID: request.clientID(body: body.clientId),
                givenName: body.givenName, familyName: body.familyName, meta: context.meta))
        return try Responses.json(tokens, status: tokens.isNew == true ? .created : .ok, noStore: true)
    }
}
