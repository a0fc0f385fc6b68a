import Foundation
import GatehouseCore
import Hummingbird

/// OIDC discovery and the JWKS: both are served from memory, built once (the JWKS once per key reload).
struct DiscoveryRoutes: Sendable {
    let keys: SigningKeys
    let discovery: Data

    init(server: GatehouseServer) {
        self.keys = server.keys
        let issuer = server.configuration.publicURL
        let document: [String: Any] = [
            "issuer": issuer,
            "token_endpoint": issuer + "/oauth/token",
            "revocation_endpoint": issuer + "/oauth/revoke",
            "introspection_endpoint": issuer + "/oauth/introspect",
            "jwks_uri": issuer + "/.well-known/jwks.json",
            // Only what this server answers today; the authorization endpoint and userinfo come with
            // the hosted sign-in page. Codes come from the verification deep link.
            "response_types_supported": [String](),
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ClientRecord.defaultScopes,
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "sid", "email", "email_verified"],
        ]
        // Built from literals above, so serialization cannot fail.
        self.discovery = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    @Sendable func openIDConfiguration(_ request: Request, context: AppRequestContext) async throws -> Response {
        Responses.raw(discovery, contentType: "application/json", cacheSeconds: 3600)
    }

    @Sendable func jwks(_ request: Request, context: AppRequestContext) async throws -> Response {
        Responses.raw(try keys.jwksDocument(), contentType: "application/jwk-set+json", cacheSeconds: 300)
    }
}
