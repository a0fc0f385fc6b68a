import Foundation
import GatehouseCore
import Hummingbird
import NIOConcurrencyHelpers

/// OIDC discovery and the JWKS: both are served from memory, built once (the JWKS once per key reload).
struct DiscoveryRoutes: Sendable {
    let keys: SigningKeys
    let discovery: Data
    private let discoveryResponse: Response
    /// The JWKS answer and the document it was made from: made again only when a key reload changed it.
    private let jwksResponse = NIOLockedValueBox<(document: Data, response: Response)?>(nil)

    init(server: GatehouseServer) {
        self.keys = server.keys
        let issuer = server.configuration.publicURL
        let document: [String: Any] = [
            "issuer": issuer,
            "authorization_endpoint": issuer + "/oauth/authorize",
            "token_endpoint": issuer + "/oauth/token",
            "userinfo_endpoint": issuer + "/userinfo",
            "end_session_endpoint": issuer + "/oauth/logout",
            "revocation_endpoint": issuer + "/oauth/revoke",
            "introspection_endpoint": issuer + "/oauth/introspect",
            "jwks_uri": issuer + "/.well-known/jwks.json",
            // Exactly what this server answers: the code flow, by query or form post.
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "form_post"],
            "authorization_response_iss_parameter_supported": true,
            "prompt_values_supported": ["none", "login", "consent", "select_account"],
            // `2` asks for a second factor (and leads a user without one to enrol it); `0` and `1` are
            // what a sign-in without one reaches.
            "acr_values_supported": AuthorizationRequest.acrValues,
            "ui_locales_supported": server.templates.languages,
            // Unsigned request objects are read like the query; signed ones are checked against the
            // client's registered `jwks` (and required by its `request_object_signing_alg`).
            "request_parameter_supported": true,
            "request_object_signing_alg_values_supported": ["none"] + SigningAlgorithm.allCases.map(\.rawValue),
            // `request_uri` only as the answer of a pushed request (RFC 9126).
            "request_uri_parameter_supported": false,
            "pushed_authorization_request_endpoint": issuer + "/oauth/par",
            // Open only to holders of an initial access token an operator issued.
            "registration_endpoint": issuer + "/oauth/register",
            "require_pushed_authorization_requests": false,
            "claims_parameter_supported": true,
            // A client's `backchannel_logout_uri` hears of every ending session of the user it had;
            // the token's `sid` is the one in its ID tokens.
            "backchannel_logout_supported": true,
            "backchannel_logout_session_supported": true,
            // The logout page frames each signed-in client's `frontchannel_logout_uri`, with iss and sid.
            "frontchannel_logout_supported": true,
            "frontchannel_logout_session_supported": true,
            "grant_types_supported": [
                "authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange",
                "urn:ietf:params:oauth:grant-type:device_code",
            ],
            "device_authorization_endpoint": issuer + "/oauth/device_authorization",
            // Pairwise per client (`subject_type=pairwise`), by sector.
            "subject_types_supported": ["public", "pairwise"],
            // RS256 first: OIDC Core §15.1 makes it mandatory, and it is the default of every client.
            "id_token_signing_alg_values_supported": SigningAlgorithm.allCases.map(\.rawValue),
            "userinfo_signing_alg_values_supported": SigningAlgorithm.allCases.map(\.rawValue),
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            // RFC 9449 §5.1: tokens are bound to a DPoP key whenever a proof comes with the request.
            "dpop_signing_alg_values_supported": DPoPProof.algorithms,
            "scopes_supported": ["openid", "profile", "email", "address", "phone", "offline_access"],
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "acr", "sid", "at_hash"]
                + UserClaims.supported.sorted(),
        ]
        // Built from literals above, so serialization cannot fail.
        self.discovery = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        self.discoveryResponse = Responses.prepared(discovery, contentType: "application/json", cacheSeconds: 3600)
    }

    @Sendable func openIDConfiguration(_ request: Request, context: AppRequestContext) async throws -> Response {
        discoveryResponse
    }

    @Sendable func jwks(_ request: Request, context: AppRequestContext) async throws -> Response {
        let document = try keys.jwksDocument()
        return jwksResponse.withLockedValue { cached in
            if let cached, cached.document == document { return cached.response }
            let response = Responses.prepared(document, contentType: "application/jwk-set+json", cacheSeconds: 300)
            cached = (document, response)
            return response
        }
    }
}
