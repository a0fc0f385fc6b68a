import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// An admin credential as an operator gets one: a confidential client allowed `scopes`, and its
/// `client_credentials` token.
func adminToken(_ server: TestServer, _ client: some TestClientProtocol, id: String, scopes: [String]) async throws -> String {
    try await adminCredential(server, client, id: id, scopes: scopes).token
}

func adminCredential(
    _ server: TestServer, _ client: some TestClientProtocol, id: String, scopes: [String]
) async throws
    -> (token: String, secret: String)
{
    let created = try await server.createClient(id: id, kind: .confidential)
    _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(id: id, settings: [], scopes: scopes)
    let secret = try #require(created.secret)
    let token = try await client.form(
        "/oauth/token", ["grant_type": "client_credentials", "scope": scopes.joined(separator: " ")], basic: (id, secret))
    #expect(token.status == .ok, "\(token.text)")
    return (try #require(token.string("access_token")), secret)
}
