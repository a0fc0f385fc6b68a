import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Forged and stale access tokens must all be refused with 401.
@Suite("Access-token verification")
struct TokenAttackTests {
    static func b64url(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func header(_ fields: [String: String]) throws -> String {
        b64url(try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
    }

    static func parts(_ jwt: String) -> [String] { jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    func expectRejected(_ client: some TestClientProtocol, _ token: String, _ label: String) async throws {
        let me = try await client.json(.get, "/v1/me", bearer: token)
        #expect(me.status == .unauthorized, "\(label): \(me.status)")
        #expect(me.headers[.contentType] == "application/problem+json", "\(label)")
    }

    @Test("alg none, HS256 with the public key, unknown kid, wrong key, tampered and expired tokens are 401")
    func forgedTokens() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let real = Self.parts(user.accessToken)
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .ok)
            let kid = try #require(server.server.keys.currentKID(.es256))
            let rsaKid = try #require(server.server.keys.currentKID(.rs256))

            // alg: none, no signature.
            let none = try Self.header(["alg": "none", "typ": "at+jwt", "kid": kid]) + "." + real[1] + "."
            try await expectRejected(client, none, "alg none")

            // HS256 keyed with the public key, the classic algorithm-confusion attack.
            let jwks = try #require(try JSONSerialization.jsonObject(with: server.server.keys.jwksDocument()) as? [String: Any])
            let jwk = try #require((jwks["keys"] as? [[String: String]])?.first { $0["kid"] == kid })
            func decode(_ s: String) -> Data {
                var b = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                while b.count % 4 != 0 { b += "=" }
                return Data(base64Encoded: b)!
            }
            let publicKey = try P256.Signing.PublicKey(x963Representation: [0x04] + decode(jwk["x"]!) + decode(jwk["y"]!))
            for keyMaterial in [Data(publicKey.pemRepresentation.utf8), publicKey.x963Representation, publicKey.derRepresentation] {
                let input = try Self.header(["alg": "HS256", "typ": "at+jwt", "kid": kid]) + "." + real[1]
                let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: keyMaterial))
                try await expectRejected(client, input + "." + Self.b64url(Data(mac)), "HS256 with public key")
            }

            // A well-formed ES256 token from a key we never published, under an unknown kid and under ours.
            let rogue = P256.Signing.PrivateKey()
            for rogueKid in ["unknown-kid", kid] {
                let input = try Self.header(["alg": "ES256", "typ": "at+jwt", "kid": rogueKid]) + "." + real[1]
                let signature = try rogue.signature(for: Data(input.utf8)).rawRepresentation
                try await expectRejected(client, input + "." + Self.b64url(signature), "rogue key, kid \(rogueKid)")
            }
            // Our two keys confused: the ES256 token relabelled RS256 (its own kid, and the RSA key's),
            // and a genuine RS256 access token relabelled ES256 under the RSA kid.
            for relabelled in [["alg": "RS256", "kid": kid], ["alg": "RS256", "kid": rsaKid], ["alg": "ES256", "kid": rsaKid]] {
                let header = try Self.header(relabelled.merging(["typ": "at+jwt"]) { a, _ in a })
                try await expectRejected(client, header + "." + real[1] + "." + real[2], "relabelled \(relabelled)")
            }
            let rsaSigned = try server.services.tokens.sign(
                try JSONDecoder().decode(AccessTokenClaims.self, from: decodeSegment(real[1])), typ: "at+jwt", algorithm: .rs256)
            #expect(try await client.json(.get, "/v1/me", bearer: rsaSigned).status == .ok)
            let rsaParts = Self.parts(rsaSigned)
            try await expectRejected(
                client, try Self.header(["alg": "ES256", "typ": "at+jwt", "kid": rsaKid]) + "." + rsaParts[1] + "." + rsaParts[2],
                "RS256 token relabelled ES256")
            try await expectRejected(
                client, try Self.header(["alg": "RS256", "typ": "at+jwt", "kid": kid]) + "." + rsaParts[1] + "." + rsaParts[2],
                "RS256 token under the ES256 kid")

            // No kid at all.
            try await expectRejected(
                client, try Self.header(["alg": "ES256", "typ": "at+jwt"]) + "." + real[1] + "." + real[2], "no kid")

            // Tampered payload, original signature.
            var claims = try decodeClaims(user.accessToken)
            claims["sub"] = UUID().uuidString.lowercased()
            let tampered = real[0] + "." + Self.b64url(try JSONSerialization.data(withJSONObject: claims)) + "." + real[2]
            try await expectRejected(client, tampered, "tampered")

            // Garbage.
            for junk in ["", "a.b", "a.b.c", "....", String(repeating: "x", count: 10_000)] {
                try await expectRejected(client, junk, "junk \(junk.prefix(10))")
            }

            // Expired: 15 minutes is the default lifetime.
            server.clock.advance(by: 15 * 60 + 1)
            try await expectRejected(client, user.accessToken, "expired")
        }
    }

    @Test("A key planted in the database without the server secret neither verifies nor is published")
    func plantedKey() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let rogue = P256.Signing.PrivateKey()
            let x963 = Array(rogue.publicKey.x963Representation)
            let jwk = try JSONSerialization.data(withJSONObject: [
                "kty": "EC", "crv": "P-256", "kid": "planted", "alg": "ES256",
                "x": Self.b64url(Data(x963[1..<33])), "y": Self.b64url(Data(x963[33..<65])),
            ])
            let now = server.clock.now()
            try await server.persistence.transaction {
                try await $0.signingKeys.insert(
                    SigningKeyRecord(
                        kid: "planted", algorithm: "ES256", publicJWK: String(decoding: jwk, as: UTF8.self),
                        sealedPrivateKey: Data(rogue.rawRepresentation).base64EncodedString(), createdAt: now,
                        retiredAt: now, publishUntil: now + 3600))
            }
            try await server.server.keys.load()
            let jwks = try await client.json(.get, "/.well-known/jwks.json")
            #expect(!jwks.text.contains("planted"))
            let input = try Self.header(["alg": "ES256", "typ": "at+jwt", "kid": "planted"]) + "." + Self.parts(user.accessToken)[1]
            let forged = input + "." + Self.b64url(try rogue.signature(for: Data(input.utf8)).rawRepresentation)
            try await expectRejected(client, forged, "planted key")
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .ok)
        }
    }

    @Test("A revoked key stops verifying at once; revoking the current key makes a new one first")
    func keyRevocation() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let leaked = try #require(server.server.keys.currentKID(.es256))
            let rsa = try #require(server.server.keys.currentKID(.rs256))
            let admin = KeyAdmin(keys: server.server.keys, clock: server.clock)
            #expect(try await admin.revoke(kid: leaked))
            // Only the revoked key's algorithm got a new key.
            #expect(server.server.keys.currentKID(.es256) != leaked && server.server.keys.currentKID(.rs256) == rsa)
            // The token it signed is refused (the verified-token cache included), and it left the JWKS.
            let refused = try await client.json(.get, "/v1/me", bearer: user.accessToken)
            #expect(refused.status == .unauthorized)
            let jwks = try await client.json(.get, "/.well-known/jwks.json")
            let kids = ((jwks.object["keys"] as? [[String: Any]]) ?? []).compactMap { $0["kid"] as? String }
            #expect(!kids.contains(leaked) && kids.count == 2 && kids.contains(rsa))
            // The refresh token still works and brings a token signed by the new key.
            let refreshed = try await refresh(client, user.refreshToken)
            #expect(refreshed.status == .ok)
            let renewed = try #require(refreshed.string("access_token"))
            #expect(try await client.json(.get, "/v1/me", bearer: renewed).status == .ok)
            // A retired key can be revoked too; an unknown or already revoked one is an error.
            let current = try #require(server.server.keys.currentKID(.es256))
            _ = try await server.server.keys.rotate(publishOldFor: 3600, algorithms: [.es256])
            #expect(try await admin.revoke(kid: current) == false)
            await #expect(throws: SigningKeysError.self) { try await admin.revoke(kid: leaked) }
            let newest = try #require(server.server.keys.currentKID(.es256))
            #expect(Set(try await admin.list().map(\.kid)) == [newest, rsa])
        }
    }

    @Test("Rotated keys: old tokens still verify, new tokens use the new kid, both keys are published")
    func keyRotation() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let before = try await signUp(client)
            let oldKids = Set(SigningAlgorithm.allCases.compactMap { server.server.keys.currentKID($0) })
            let newKids = try await server.server.keys.rotate(publishOldFor: 24 * 3600)
            let newKid = try #require(server.server.keys.currentKID(.es256))
            #expect(oldKids.count == 2 && oldKids.isDisjoint(with: newKids) && newKids.contains(newKid))
            let jwks = try await client.json(.get, "/.well-known/jwks.json")
            let kids = Set(((jwks.object["keys"] as? [[String: Any]]) ?? []).compactMap { $0["kid"] as? String })
            #expect(kids == oldKids.union(newKids))
            #expect(try await client.json(.get, "/v1/me", bearer: before.accessToken).status == .ok)
            let after = try await logIn(client, email: before.email, password: before.password)
            let header = try decodeSegment(Self.parts(after.accessToken)[0])
            #expect(String(decoding: header, as: UTF8.self).contains(newKid))

            // Once the old key's publication window is over it is gone from the JWKS.
            server.clock.advance(by: 24 * 3600 + 1)
            try await server.server.keys.load()
            let later = try await client.json(.get, "/.well-known/jwks.json")
            #expect(Set(((later.object["keys"] as? [[String: Any]]) ?? []).compactMap { $0["kid"] as? String }) == Set(newKids))
        }
    }
}
