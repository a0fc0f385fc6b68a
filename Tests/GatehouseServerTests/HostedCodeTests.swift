import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Authorization codes of sign-ins that run at the same time.
@Suite("Hosted sign-in: concurrent codes")
struct HostedCodeTests {
    @Test(
        "HS-15: two sign-ins of one user to one client at once (two browsers) each get a code, and each code redeems whichever goes first; the ID tokens are RS256 and verify with the JWKS's RSA key"
    )
    func concurrentCodes() async throws {
        let (server, _) = try await Hosted.start()
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "spa")
            var codes: [(code: String, verifier: String)] = []
            for _ in 0..<2 {
                let jar = HostedJar(client)
                let pkce = pkcePair()
                let answer = try await Hosted.signIn(
                    jar, Hosted.request(challenge: pkce.challenge), email: user.email, password: user.password)
                codes.append((try #require(HostedJar.query(answer)["code"]), pkce.verifier))
            }
            // The second code first: redeeming one must not spend the other.
            for (code, verifier) in codes.reversed() {
                let tokens = try await Hosted.exchange(client, code: code, verifier: verifier)
                #expect(tokens.status == .ok, "\(tokens.text)")
                let jwks = try #require((try await client.json(.get, "/.well-known/jwks.json")).object["keys"] as? [[String: Any]])
                let (header, _) = try JWSCheck.verify(try #require(tokens.string("id_token")), jwks: jwks)
                #expect(header["alg"] as? String == "RS256")
            }
        }
    }
}
