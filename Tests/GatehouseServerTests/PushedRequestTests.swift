import Crypto
import CryptoExtras
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// Signed request objects (RFC 9101) checked against the client's registered keys, and pushed
/// authorization requests (RFC 9126).
@Suite("Request objects and pushed authorization requests")
struct PushedRequestTests {
    static let redirect = "https://signer.example/cb"

    /// A client's key pair, its public half as the client registers it.
    struct ClientKey {
        let rsa = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
        let ec = P256.Signing.PrivateKey()
        /// The kids are `r` and `e` followed by this: a rotated key set has other kids.
        var id = "1"

        var jwks: String {
            let primitives = try! rsa.publicKey.getKeyPrimitives()
            let (n, e) = (primitives.modulus, primitives.publicExponent)
            let x963 = Array(ec.publicKey.x963Representation)
            let keys: [[String: String]] = [
                ["kty": "RSA", "kid": "r" + id, "use": "sig", "n": Base64URL.encode(n), "e": Base64URL.encode(e)],
                ["kty": "EC", "crv": "P-256", "kid": "e" + id, "x": Base64URL.encode(x963[1..<33]), "y": Base64URL.encode(x963[33..<65])],
            ]
            return String(decoding: try! JSONSerialization.data(withJSONObject: ["keys": keys]), as: UTF8.self)
        }

        func sign(_ claims: [String: Any], alg: String = "RS256", kid: String? = nil) throws -> String {
            var header: [String: Any] = ["alg": alg, "typ": "oauth-authz-req+jwt"]
            header["kid"] = kid ?? (alg == "RS256" ? "r" : "e") + id
            let input =
                Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
                + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
            let signature =
                alg == "RS256"
                ? try rsa.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5).rawRepresentation
                : try ec.signature(for: Data(input.utf8)).rawRepresentation
            return input + "." + Base64URL.encode(signature)
        }
    }

    static func start(_ key: ClientKey, settings: [String] = []) async throws -> (TestServer, String) {
        let server = try await TestServer.startOpen(.sqlite)
        let client = try await server.createClient(
            id: "signer", kind: .confidential, redirectURIs: [redirect],
            settings: ["email_verification=off", "jwks=\(key.jwks)"] + settings)
        return (server, try #require(client.secret))
    }

    static func claims(state: String, now: Date, extra: [String: Any] = [:]) -> [String: Any] {
        [
            "iss": "signer", "aud": Hosted.issuer, "client_id": "signer", "response_type": "code", "redirect_uri": redirect,
            "scope": "openid", "state": state, "nonce": "n-" + state, "exp": Int(now.timeIntervalSince1970) + 300,
            "jti": UUID().uuidString,
        ].merging(extra) { _, new in new }
    }

    /// The query a browser brings: the object, the client and its redirect URI (where a refused object
    /// is answered; a valid object's own values take precedence).
    static func authorize(_ object: String) -> String {
        authorizeURI([
            ("client_id", "signer"), ("request", object), ("response_type", "code"), ("scope", "openid"), ("redirect_uri", redirect),
        ])
    }

    @Test(
        "JAR-1: a request object signed with the client's registered RSA or EC key is read (its state and nonce answer); a tampered, expired, replayed, foreign-audience, foreign-issuer, unknown-key or overlong one is refused at the redirect URI with invalid_request_object; with request_object_signing_alg=RS256 an unsigned or ES256 one is refused too"
    )
    func signedRequestObjects() async throws {
        let key = ClientKey()
        let (server, secret) = try await Self.start(key)
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "signer")
            let jar = HostedJar(client)
            let now = server.clock.now()
            // Signed with RS256: the object's state comes back and its nonce is in the ID token.
            let good = try key.sign(Self.claims(state: "good", now: now))
            let answer = try await Hosted.signIn(jar, Self.authorize(good), email: user.email, password: user.password)
            let query = HostedJar.query(answer)
            #expect(query["state"] == "good", "\(answer.headers[.location] ?? answer.text)")
            let tokens = try await client.form(
                "/oauth/token",
                ["grant_type": "authorization_code", "code": try #require(query["code"]), "redirect_uri": Self.redirect],
                basic: ("signer", secret))
            #expect(try decodeClaims(try #require(tokens.string("id_token")))["nonce"] as? String == "n-good")
            // ES256 with the EC key, the browser now signed in.
            let ec = try await jar.open(Self.authorize(try key.sign(Self.claims(state: "ec", now: now), alg: "ES256")))
            #expect(HostedJar.query(ec)["state"] == "ec" && HostedJar.query(ec)["code"] != nil, "\(ec.text)")

            let parts = good.split(separator: ".").map(String.init)
            var tamperedClaims = Self.claims(state: "tampered", now: now)
            tamperedClaims["jti"] = "t"
            let tampered = parts[0] + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: tamperedClaims)) + "." + parts[2]
            let stranger = P256.Signing.PrivateKey()
            let strangerInput =
                Base64URL.encode(Data(#"{"alg":"ES256","kid":"e1"}"#.utf8)) + "."
                + Base64URL.encode(try JSONSerialization.data(withJSONObject: Self.claims(state: "stranger", now: now)))
            let strangers = strangerInput + "." + Base64URL.encode(try stranger.signature(for: Data(strangerInput.utf8)).rawRepresentation)
            let refused: [(String, String)] = [
                ("tampered", tampered),
                ("expired", try key.sign(Self.claims(state: "expired", now: now, extra: ["exp": Int(now.timeIntervalSince1970) - 1]))),
                ("replayed", good),
                ("foreign audience", try key.sign(Self.claims(state: "aud", now: now, extra: ["aud": "https://elsewhere.example"]))),
                ("foreign issuer", try key.sign(Self.claims(state: "iss", now: now, extra: ["iss": "someone-else"]))),
                ("no exp", try key.sign(Self.claims(state: "noexp", now: now).filter { $0.key != "exp" })),
                ("a day long", try key.sign(Self.claims(state: "long", now: now, extra: ["exp": Int(now.timeIntervalSince1970) + 86400]))),
                ("unknown kid", try key.sign(Self.claims(state: "kid", now: now), kid: "r9")),
                ("a stranger's key", strangers),
            ]
            for (why, object) in refused {
                let answer = try await jar.send(.get, Self.authorize(object))
                let query = HostedJar.query(answer)
                #expect(answer.status == .seeOther && query["error"] == "invalid_request_object", "\(why): \(answer.status) \(query)")
                #expect(query["code"] == nil, "\(why)")
            }

            // The client now requires RS256: unsigned and ES256 objects are refused, RS256 still read.
            _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock, cache: server.services.clientCache).update(
                id: "signer", settings: ["request_object_signing_alg=RS256"])
            let unsigned = Hosted.jwt(header: #"{"alg":"none"}"#, claims: #"{"state":"u","client_id":"signer"}"#)
            for object in [unsigned, try key.sign(Self.claims(state: "ec2", now: now), alg: "ES256")] {
                let answer = try await jar.send(.get, Self.authorize(object))
                #expect(HostedJar.query(answer)["error"] == "invalid_request_object", "\(HostedJar.query(answer))")
            }
            let rs = try await jar.open(Self.authorize(try key.sign(Self.claims(state: "rs", now: now))))
            #expect(HostedJar.query(rs)["state"] == "rs" && HostedJar.query(rs)["code"] != nil)
        }
    }

    @Test(
        "PAR-1: a pushed request (client_secret_basic) answers 201 with a request_uri good for 60 s; the browser brings it with client_id alone and signs in (the pushed state comes back); it works once; expired, unknown or another client's request_uri is a page, never a redirect; pushing needs the client's secret, refuses request_uri and a bad request object; a client with require_pushed_authorization_requests=on is refused a plain request at its redirect URI and signs in through PAR, a signed request object pushed included"
    )
    func pushedRequests() async throws {
        let key = ClientKey()
        let (server, secret) = try await Self.start(key)
        _ = try await server.createClient(id: "other", kind: .confidential, redirectURIs: ["https://other.example/cb"])
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: "signer")
            let jar = HostedJar(client)
            func push(_ fields: [String: String], basic: (String, String)? = ("signer", "")) async throws -> TestResponse {
                try await client.form("/oauth/par", fields, basic: basic.map { ($0.0, $0.1.isEmpty ? secret : $0.1) })
            }
            let fields = [
                "response_type": "code", "redirect_uri": Self.redirect, "scope": "openid", "state": "pushed", "nonce": "n",
            ]
            let pushed = try await push(fields)
            #expect(pushed.status == .created && pushed.headers[.cacheControl] == "no-store", "\(pushed.text)")
            let uri = try #require(pushed.string("request_uri"))
            #expect(uri.hasPrefix("urn:ietf:params:oauth:request_uri:") && pushed.object["expires_in"] as? Int == 60)
            let browse = authorizeURI([("client_id", "signer"), ("request_uri", uri)])
            let answer = try await Hosted.signIn(jar, browse, email: user.email, password: user.password)
            #expect(HostedJar.query(answer)["state"] == "pushed" && HostedJar.query(answer)["code"] != nil, "\(answer.text)")
            // Once only; another client's; unknown; expired.
            let again = try await jar.send(.get, browse)
            #expect(again.status == .badRequest && again.headers[.location] == nil)
            let second = try #require(try await push(fields).string("request_uri"))
            let foreign = try await jar.send(.get, authorizeURI([("client_id", "other"), ("request_uri", second)]))
            #expect(foreign.status == .badRequest && foreign.headers[.location] == nil)
            let unknown = try await jar.send(
                .get, authorizeURI([("client_id", "signer"), ("request_uri", "urn:ietf:params:oauth:request_uri:nope")]))
            #expect(unknown.status == .badRequest)
            let late = try #require(try await push(fields).string("request_uri"))
            server.clock.advance(by: 61)
            let expired = try await jar.send(.get, authorizeURI([("client_id", "signer"), ("request_uri", late)]))
            #expect(expired.status == .badRequest && expired.headers[.location] == nil)

            // Pushing: the secret is required; request_uri cannot be pushed; a bad object is invalid_request_object.
            let noSecret = try await client.form("/oauth/par", fields.merging(["client_id": "signer"]) { a, _ in a })
            #expect(noSecret.status == .unauthorized && noSecret.string("error") == "invalid_client", "\(noSecret.text)")
            let wrong = try await push(fields, basic: ("signer", "not-the-secret"))
            #expect(wrong.status == .unauthorized)
            let nested = try await push(fields.merging(["request_uri": uri]) { a, _ in a })
            #expect(nested.status == .badRequest && nested.string("error") == "invalid_request")
            let badObject = try await push(["request": "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"])
            #expect(badObject.status == .badRequest && badObject.string("error") == "invalid_request_object", "\(badObject.text)")
            let badRedirect = try await push(fields.merging(["redirect_uri": "https://evil.example/cb"]) { _, b in b })
            #expect(badRedirect.status == .badRequest && badRedirect.string("error") == "invalid_request")

            // A client that must push.
            _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock, cache: server.services.clientCache).update(
                id: "signer", settings: ["require_pushed_authorization_requests=on"])
            let plain = try await jar.send(
                .get,
                authorizeURI([
                    ("client_id", "signer"), ("response_type", "code"), ("redirect_uri", Self.redirect), ("scope", "openid"),
                    ("state", "p"),
                ]))
            #expect(HostedJar.query(plain)["error"] == "invalid_request" && HostedJar.query(plain)["state"] == "p")
            let object = try key.sign(Self.claims(state: "signed-push", now: server.clock.now()))
            let signedPush = try #require(try await push(["request": object]).string("request_uri"))
            let signedAnswer = try await jar.open(authorizeURI([("client_id", "signer"), ("request_uri", signedPush)]))
            #expect(HostedJar.query(signedAnswer)["state"] == "signed-push" && HostedJar.query(signedAnswer)["code"] != nil)
        }
    }

    @Test(
        "JAR-2: a client that publishes its keys at jwks_uri (a real HTTP server) has its signed request objects read: the set is fetched once and cached; after the client rotates, an object with the new kid makes one refetch and is read; an object with a kid the new set lacks is refused with invalid_request_object without another fetch inside a minute; a failed refetch counts as its minute's (the cached set still reads), and a minute after the client's server is back the new kid is read"
    )
    func publishedKeys() async throws {
        let (first, rotated) = (ClientKey(), ClientKey(id: "2"))
        let served = Mutex(first.jwks)
        let fetches = Mutex(0)
        let failing = Mutex(false)
        let publisher = try await HookServer.start { received in
            guard received.path == "/jwks" else { return HookServer.Answer(status: 404) }
            fetches.withLock { $0 += 1 }
            if failing.withLock({ $0 }) { return HookServer.Answer(status: 503, body: "{}") }
            return HookServer.Answer(status: 200, body: served.withLock { $0 })
        }
        let server = try await TestServer.startOpen(.sqlite)
        do {
            _ = try await server.createClient(
                id: "signer", kind: .confidential, redirectURIs: [Self.redirect],
                settings: ["email_verification=off", "jwks_uri=http://127.0.0.1:\(publisher.port)/jwks"])
            try await server.withRouter { client in
                let user = try await signUp(client, clientID: "signer")
                let jar = HostedJar(client)
                let signedIn = try await Hosted.signIn(
                    jar, Self.authorize(try first.sign(Self.claims(state: "a", now: server.clock.now()))), email: user.email,
                    password: user.password)
                #expect(HostedJar.query(signedIn)["state"] == "a", "\(signedIn.text)")
                let again = try await jar.open(
                    Self.authorize(try first.sign(Self.claims(state: "b", now: server.clock.now()), alg: "ES256")))
                #expect(HostedJar.query(again)["state"] == "b" && fetches.withLock { $0 } == 1)

                served.withLock { $0 = rotated.jwks }
                server.clock.advance(by: 61)
                let new = try await jar.open(Self.authorize(try rotated.sign(Self.claims(state: "c", now: server.clock.now()))))
                #expect(HostedJar.query(new)["state"] == "c" && HostedJar.query(new)["code"] != nil, "\(HostedJar.query(new))")
                #expect(fetches.withLock { $0 } == 2)
                let old = try await jar.send(.get, Self.authorize(try first.sign(Self.claims(state: "d", now: server.clock.now()))))
                #expect(HostedJar.query(old)["error"] == "invalid_request_object", "\(HostedJar.query(old))")
                #expect(fetches.withLock { $0 } == 2)

                // The client's server fails: a minute on, one refetch is tried; while that minute lasts a
                // failed refetch counts as the minute's, and the cached set still reads the known kid.
                let third = ClientKey(id: "3")
                failing.withLock { $0 = true }
                server.clock.advance(by: 61)
                for state in ["e", "f", "g"] {
                    let unknown = try await jar.send(
                        .get, Self.authorize(try third.sign(Self.claims(state: state, now: server.clock.now()))))
                    #expect(HostedJar.query(unknown)["error"] == "invalid_request_object", "\(HostedJar.query(unknown))")
                }
                #expect(fetches.withLock { $0 } == 3, "one failed refetch for three unknown kids")
                let known = try await jar.open(Self.authorize(try rotated.sign(Self.claims(state: "h", now: server.clock.now()))))
                #expect(HostedJar.query(known)["state"] == "h" && HostedJar.query(known)["code"] != nil, "\(HostedJar.query(known))")
                // Back up with the new key, a minute on: one refetch, and the new kid is read.
                failing.withLock { $0 = false }
                served.withLock { $0 = third.jwks }
                server.clock.advance(by: 61)
                let back = try await jar.open(Self.authorize(try third.sign(Self.claims(state: "i", now: server.clock.now()))))
                #expect(HostedJar.query(back)["state"] == "i" && HostedJar.query(back)["code"] != nil, "\(HostedJar.query(back))")
                #expect(fetches.withLock { $0 } == 4)
            }
        } catch {
            await publisher.stop()
            await server.stop()
            throw error
        }
        await publisher.stop()
        await server.stop()
    }
}
