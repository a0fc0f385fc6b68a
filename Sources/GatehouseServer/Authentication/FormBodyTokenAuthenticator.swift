import GatehouseCore
import Hummingbird

/// A user's access token as the `access_token` field of a form POST (RFC 6750 §2.2), which OpenID
/// Connect lets a client use at userinfo (Core §5.3.1). Only there: everywhere else a token in a body
/// is one a log or a cache may keep.
struct FormBodyTokenAuthenticator: RequestAuthenticator {
    let bearer: BearerAuthenticator

    func authenticate(_ request: Request) async throws -> Identity? {
        guard request.method == .post, request.headers[.authorization] == nil,
            request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
        else { return nil }
        guard let token = try await RequestDecoding.formFields(from: request)["access_token"] else { return nil }
        // A form body has no room for a proof: a DPoP-bound token is refused here.
        return try await bearer.authenticate(.bearer(token)).map(Identity.user)
    }
}
