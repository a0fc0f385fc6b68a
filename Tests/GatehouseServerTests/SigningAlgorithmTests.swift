import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Each client's choice of algorithm for its ID tokens, access tokens and userinfo answers.
@Suite("Signing algorithms per client")
struct SigningAlgorithmTests {
    @Test(
        "SIG-1: a client with id_token_signed_response_alg=ES256 gets ES256 ID tokens, with access_token_signed_response_alg=RS256 RS256 access tokens that /v1/me accepts, with userinfo_signed_response_alg=RS256 userinfo as application/jwt (iss, aud, sub, the scopes' claims); the default client gets RS256 ID tokens, ES256 access tokens and plain JSON userinfo; every signature verifies with the JWKS"
    )
    func perClientAlgorithms() async throws {
        let (server, _) = try await Hosted.start([
            "id_token_signed_response_alg=ES256", "access_token_signed_response_alg=RS256", "userinfo_signed_response_alg=RS256",
        ])
        _ = try await server.createClient(id: "plain", redirectURIs: [Hosted.spa], settings: ["email_verification=off"])
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            let jar = HostedJar(client)
            let jwks = try #require((try await client.json(.get, "/.well-known/jwks.json")).object["keys"] as? [[String: Any]])
            var tokensOf: [String: TestResponse] = [:]
            for id in ["spa", "plain"] {
                let pkce = pkcePair()
                let uri = Hosted.request(id, challenge: pkce.challenge)
                let answer =
                    id == "spa" ? try await Hosted.signIn(jar, uri, email: user.email, password: user.password) : try await jar.open(uri)
                let code = try #require(HostedJar.query(answer)["code"], "\(id): \(answer.text)")
                tokensOf[id] = try await Hosted.exchange(client, code: code, verifier: pkce.verifier, id: id)
            }
            let custom = try #require(tokensOf["spa"])
            let (idHeader, idClaims) = try JWSCheck.verify(try #require(custom.string("id_token")), jwks: jwks)
            #expect(idHeader["alg"] as? String == "ES256" && idClaims["aud"] as? String == "spa")
            let access = try #require(custom.string("access_token"))
            let (accessHeader, _) = try JWSCheck.verify(access, jwks: jwks)
            #expect(accessHeader["alg"] as? String == "RS256" && accessHeader["typ"] as? String == "at+jwt")
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .ok)

            let info = try await client.executeRequest(
                uri: "/userinfo", method: .get, headers: [.authorization: "Bearer \(access)"], body: nil)
            #expect(info.status == .ok && info.headers[.contentType] == "application/jwt", "\(info.headers)")
            let (infoHeader, infoClaims) = try JWSCheck.verify(String(buffer: info.body), jwks: jwks)
            #expect(infoHeader["alg"] as? String == "RS256")
            #expect(infoClaims["iss"] as? String == Hosted.issuer && infoClaims["aud"] as? String == "spa")
            #expect(infoClaims["sub"] as? String == idClaims["sub"] as? String && infoClaims["email"] as? String == user.email.lowercased())

            let plain = try #require(tokensOf["plain"])
            #expect(try JWSCheck.verify(try #require(plain.string("id_token")), jwks: jwks).header["alg"] as? String == "RS256")
            let plainAccess = try #require(plain.string("access_token"))
            #expect(try JWSCheck.verify(plainAccess, jwks: jwks).header["alg"] as? String == "ES256")
            let plainInfo = try await client.json(.get, "/userinfo", bearer: plainAccess)
            #expect(plainInfo.status == .ok && plainInfo.headers[.contentType]?.hasPrefix("application/json") == true)
        }
    }
}
