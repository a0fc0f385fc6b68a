import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// How the edge reads the credentials a request carries. Both readers take a fast path for the common
/// shape (a bearer token with nothing around it, a Basic half without an escape); these pin that the
/// uncommon shapes still read as they did through Foundation.
@Suite("Credential reading")
struct CredentialReadingTests {
    @Test("EDGE-3: a bearer token with blanks around it is the same token; Basic halves are percent-decoded only when they carry an escape")
    func credentialShapes() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let backend = try await server.createClient(id: "backend", kind: .confidential)
        let secret = try #require(backend.secret)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let plain = try await client.json(.get, "/v1/me", bearer: user.accessToken)
            #expect(plain.status == .ok)
            let email = try #require(plain.string("email"))
            // Spaces and a tab after the scheme, a no-break space (Unicode's Zs) at the end: trimmed.
            for header in ["Bearer   \(user.accessToken)", "Bearer \t\(user.accessToken) ", "Bearer \(user.accessToken)\u{00A0}"] {
                let answer = try await client.json(.get, "/v1/me", headers: [.authorization: header])
                #expect(answer.status == .ok && answer.string("email") == email, "\(header.debugDescription): \(answer.text)")
            }
            // A character inside the token is not trimmed away: the token is another one.
            let inside = try await client.json(.get, "/v1/me", headers: [.authorization: "Bearer x\(user.accessToken)"])
            #expect(inside.status == .unauthorized)

            // RFC 6749 §2.3.1: the id and secret are form-encoded before Basic; `e` is %65.
            let escaped = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials"], basic: ("back%65nd", secret))
            #expect(escaped.status == .ok, "\(escaped.text)")
            let unescaped = try await client.form("/oauth/token", ["grant_type": "client_credentials"], basic: ("backend", secret))
            #expect(unescaped.status == .ok)
            // An escape that decodes to another id is that other id, refused.
            let other = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials"], basic: ("back%66nd", secret))
            #expect(other.status == .unauthorized && other.string("error") == "invalid_client")
        }
    }
}
