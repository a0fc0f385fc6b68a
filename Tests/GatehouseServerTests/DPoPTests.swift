import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// DPoP (RFC 9449) with proofs made by PyJWT (`scripts/dpop-proof.py`), never by Gatehouse: tokens
/// bound to the proof's key, a bound refresh token useless under another key, and every malformed,
/// replayed or misdirected proof refused with the error RFC 9449 names.
@Suite("DPoP")
struct DPoPTests {
    static let base = "http://127.0.0.1:8080"

    static func hasPyJWT() async -> Bool {
        guard await IndependentDPoP.isAvailable() else {
            print("skipped: pip install pyjwt cryptography to run the DPoP tests with independently made proofs")
            return false
        }
        return true
    }

    /// A PEM file for a key the script makes on first use.
    static func keyFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("gh-dpop-\(UUID().uuidString.prefix(8))-\(name).pem").path
    }

    @Test(
        "DPOP-1: a proof at sign-up binds the session to its key: token_type DPoP, cnf.jkt the key's thumbprint; /v1/me and introspection honour the binding; a refresh by the same key rotates, by another key or without a proof it is refused and audited and the token still works for its key; the proofs' jti records are purged after 11 minutes",
        arguments: TestDatabase.available)
    func boundSession(_ database: TestDatabase) async throws {
        guard await Self.hasPyJWT() else { return }
        let server = try await TestServer.startOpen(database)
        let backend = try await server.createClient(id: "backend", kind: .confidential)
        let device = Self.keyFile("device")
        let thief = Self.keyFile("thief")
        let now: @Sendable () -> Int = { [clock = server.clock] in Int(clock.now().timeIntervalSince1970) }
        try await server.withRouter { client in
            let signup = try await IndependentDPoP.proof(.init(key: device, htm: "POST", htu: Self.base + "/v1/signup", iat: now()))
            let answer = try await client.json(
                .post, "/v1/signup",
                ["client_id": TestServer.openClient, "email": "dpop@example.com", "password": "correct horse battery"],
                headers: [DPoP.proof: signup.proof])
            #expect(answer.status == .created, "\(answer.text)")
            #expect(answer.string("token_type") == "DPoP")
            let access = try #require(answer.string("access_token"))
            let refreshToken = try #require(answer.string("refresh_token"))
            #expect((try decodeClaims(access)["cnf"] as? [String: String]) == ["jkt": signup.jkt])

            // As a bearer token it is refused, with a DPoP challenge.
            let asBearer = try await client.json(.get, "/v1/me", bearer: access)
            #expect(asBearer.status == .unauthorized)
            #expect(asBearer.headers[.wwwAuthenticate]?.hasPrefix("DPoP ") == true, "\(asBearer.headers)")
            #expect(asBearer.headers[.wwwAuthenticate]?.contains("error=\"invalid_token\"") == true)
            // With its proof (ath the token's hash) it works; a proof without ath does not.
            let me = try await IndependentDPoP.proof(.init(key: device, htm: "GET", htu: Self.base + "/v1/me", iat: now(), token: access))
            let shown = try await client.json(.get, "/v1/me", headers: [.authorization: "DPoP \(access)", DPoP.proof: me.proof])
            #expect(shown.status == .ok, "\(shown.text)")
            #expect(shown.string("email") == "dpop@example.com")
            let noAth = try await IndependentDPoP.proof(.init(key: device, htm: "GET", htu: Self.base + "/v1/me", iat: now()))
            let refused = try await client.json(.get, "/v1/me", headers: [.authorization: "DPoP \(access)", DPoP.proof: noAth.proof])
            #expect(refused.status == .unauthorized)
            #expect(refused.string("code") == "invalid_dpop_proof")
            #expect(refused.headers[.wwwAuthenticate]?.contains("error=\"invalid_dpop_proof\"") == true)
            // The thief's key with the stolen token: refused too.
            let stolen = try await IndependentDPoP.proof(
                .init(key: thief, htm: "GET", htu: Self.base + "/v1/me", iat: now(), token: access))
            #expect(
                try await client.json(.get, "/v1/me", headers: [.authorization: "DPoP \(access)", DPoP.proof: stolen.proof]).status
                    == .unauthorized)

            // A resource server learns the binding from introspection.
            let introspected = try await client.form("/oauth/introspect", ["token": access], basic: ("backend", backend.secret ?? ""))
            #expect(introspected.object["active"] as? Bool == true)
            #expect(introspected.string("token_type") == "DPoP")
            #expect((introspected.object["cnf"] as? [String: String]) == ["jkt": signup.jkt])
            let refreshInfo = try await client.form("/oauth/introspect", ["token": refreshToken], basic: ("backend", backend.secret ?? ""))
            #expect((refreshInfo.object["cnf"] as? [String: String]) == ["jkt": signup.jkt])

            // The refresh token copied to another key, or sent without a proof: refused, audited.
            let other = try await IndependentDPoP.proof(.init(key: thief, htm: "POST", htu: Self.base + "/oauth/token", iat: now()))
            let copied = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refreshToken], proof: other.proof)
            #expect(copied.status == .badRequest)
            #expect(copied.string("error") == "invalid_grant", "\(copied.text)")
            let bare = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refreshToken], proof: nil)
            #expect(bare.status == .badRequest)
            #expect(bare.string("error") == "invalid_dpop_proof", "\(bare.text)")
            let events = try await server.persistence.read {
                try await $0.audit.list(AuditQuery(type: AuditEvent.refreshTokenKeyMismatch))
            }
            #expect(events.compactMap(\.reason).sorted() == ["no_proof", "other_key"])

            // The device's own key still refreshes, and the new tokens stay bound to it.
            let own = try await IndependentDPoP.proof(.init(key: device, htm: "POST", htu: Self.base + "/oauth/token", iat: now()))
            let rotated = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refreshToken], proof: own.proof)
            #expect(rotated.status == .ok, "\(rotated.text)")
            #expect(rotated.string("token_type") == "DPoP")
            let next = try #require(rotated.string("access_token"))
            #expect((try decodeClaims(next)["cnf"] as? [String: String]) == ["jkt": signup.jkt])

            // Each proof that held recorded its jti once (five: sign-up, me, the thief at me and at the
            // token endpoint, the refresh); housekeeping drops the records once no proof could
            // be taken again (11 minutes), long before the other counters' day.
            server.clock.advance(by: 12 * 60)
            let purged = try await Housekeeping(services: server.services).run()
            #expect((purged[.dpopProofs] ?? 0) == 5, "\(purged)")
            #expect(purged[.attemptCounters] == nil, "\(purged)")
        }
    }

    @Test(
        "DPOP-2: refused proofs: a signature that does not hold (ES256, RS256, EdDSA), replayed jti, wrong htm, wrong htu, a forged nonce, a private key in jwk, alg none, HS256, typ JWT, two DPoP headers, a key of another type than alg; at the token endpoint 400 invalid_dpop_proof, at /v1/me 401 with WWW-Authenticate DPoP error=invalid_dpop_proof; an iat five minutes off gets use_dpop_nonce and, with that nonce, is taken; RS256 and EdDSA proofs bind"
    )
    func refusedProofs() async throws {
        guard await Self.hasPyJWT() else { return }
        let server = try await TestServer.startOpen(.sqlite)
        let ec = Self.keyFile("ec")
        let now = Int(server.clock.now().timeIntervalSince1970)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let token = Self.base + "/oauth/token"
            // One proof that works, to replay.
            let good = try await IndependentDPoP.proof(.init(key: ec, htm: "POST", htu: token, iat: now))
            let first = try await Self.token(
                client, ["grant_type": "refresh_token", "refresh_token": user.refreshToken], proof: good.proof)
            #expect(first.status == .ok, "\(first.text)")
            let refreshToken = try #require(first.string("refresh_token"))

            let cases: [(String, IndependentDPoP.Spec)] = [
                ("wrong htm", .init(key: ec, htm: "GET", htu: token, iat: now)),
                ("wrong htu", .init(key: ec, htm: "POST", htu: "https://elsewhere.example/oauth/token", iat: now)),
                ("wrong path", .init(key: ec, htm: "POST", htu: Self.base + "/oauth/revoke", iat: now)),
                ("private jwk", .init(key: ec, htm: "POST", htu: token, iat: now, private: true)),
                ("alg none", .init(key: ec, alg: "none", htm: "POST", htu: token, iat: now)),
                ("HS256", .init(key: ec, alg: "HS256", htm: "POST", htu: token, iat: now)),
                ("typ JWT", .init(key: ec, htm: "POST", htu: token, iat: now, typ: "JWT")),
                ("ES256 signature over other claims", .init(key: ec, htm: "POST", htu: token, iat: now, tamper: true)),
                (
                    "RS256 signature over other claims",
                    .init(key: Self.keyFile("rsa"), alg: "RS256", htm: "POST", htu: token, iat: now, tamper: true)
                ),
                (
                    "EdDSA signature over other claims",
                    .init(key: Self.keyFile("ed"), alg: "EdDSA", htm: "POST", htu: token, iat: now, tamper: true)
                ),
                ("iat Int.min", .init(key: ec, htm: "POST", htu: token, iat: Int.min)),
                ("iat Int.max", .init(key: ec, htm: "POST", htu: token, iat: Int.max)),
                ("Ed25519 key under ES256", .init(key: Self.keyFile("ed"), htm: "POST", htu: token, iat: now, kind: "ed25519")),
            ]
            let proofs = try await IndependentDPoP.proofs(cases.map(\.1))
            for ((name, _), proof) in zip(cases, proofs) {
                let answer = try await Self.token(
                    client, ["grant_type": "refresh_token", "refresh_token": refreshToken], proof: proof.proof)
                #expect(answer.status == .badRequest, "\(name): \(answer.text)")
                #expect(answer.string("error") == "invalid_dpop_proof", "\(name): \(answer.text)")
            }
            let replayed = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refreshToken], proof: good.proof)
            #expect(replayed.string("error") == "invalid_dpop_proof", "replay: \(replayed.text)")
            #expect(replayed.string("error_description")?.contains("used before") == true)
            var two = HTTPFields()
            two.append(HTTPField(name: DPoP.proof, value: good.proof))
            two.append(HTTPField(name: DPoP.proof, value: good.proof))
            let doubled = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refreshToken], headers: two)
            #expect(doubled.string("error") == "invalid_dpop_proof")

            // A proof whose iat is five minutes off (a device with a wrong clock) is asked for a nonce, and
            // with it the same key refreshes whatever its clock says. Nothing above rotated the token.
            let skewed = try await IndependentDPoP.proofs([
                .init(key: ec, htm: "POST", htu: token, iat: now - 300), .init(key: ec, htm: "POST", htu: token, iat: now + 300),
            ])
            var nonce = ""
            for proof in skewed {
                let asked = try await Self.token(
                    client, ["grant_type": "refresh_token", "refresh_token": refreshToken], proof: proof.proof)
                #expect(asked.status == .badRequest)
                #expect(asked.string("error") == "use_dpop_nonce", "\(asked.text)")
                nonce = try #require(asked.headers[DPoP.nonce])
            }
            let again = try await IndependentDPoP.proof(.init(key: ec, htm: "POST", htu: token, iat: now - 300, nonce: nonce))
            let rotated = try await Self.token(client, ["grant_type": "refresh_token", "refresh_token": refreshToken], proof: again.proof)
            #expect(rotated.status == .ok, "\(rotated.text)")
            let access = try #require(rotated.string("access_token"))

            // At a protected route the same refusals are 401s with a DPoP challenge.
            let me = Self.base + "/v1/me"
            let resourceCases: [(String, IndependentDPoP.Spec)] = [
                ("wrong htm", .init(key: ec, htm: "POST", htu: me, iat: now, token: access)),
                ("forged nonce", .init(key: ec, htm: "GET", htu: me, iat: now - 300, token: access, nonce: "1.forged")),
                ("ath of another token", .init(key: ec, htm: "GET", htu: me, iat: now, token: user.accessToken)),
                ("alg none", .init(key: ec, alg: "none", htm: "GET", htu: me, iat: now, token: access)),
            ]
            let resourceProofs = try await IndependentDPoP.proofs(resourceCases.map(\.1))
            for ((name, _), proof) in zip(resourceCases, resourceProofs) {
                let answer = try await client.json(.get, "/v1/me", headers: [.authorization: "DPoP \(access)", DPoP.proof: proof.proof])
                #expect(answer.status == .unauthorized, "\(name): \(answer.text)")
                let code = name == "forged nonce" ? "use_dpop_nonce" : "invalid_dpop_proof"
                #expect(answer.string("code") == code, "\(name)")
                let challenge = answer.headers[.wwwAuthenticate] ?? ""
                #expect(challenge.hasPrefix("DPoP ") && challenge.contains("error=\"\(code)\""), "\(name): \(challenge)")
                #expect(challenge.contains("algs=\"ES256 RS256 EdDSA\""), "\(challenge)")
            }
            // An unbound token sent under the DPoP scheme is refused: the scheme claims a binding.
            let unboundProof = try await IndependentDPoP.proof(.init(key: ec, htm: "GET", htu: me, iat: now, token: user.accessToken))
            let unbound = try await client.json(
                .get, "/v1/me", headers: [.authorization: "DPoP \(user.accessToken)", DPoP.proof: unboundProof.proof])
            #expect(unbound.status == .unauthorized)

            // RS256 and EdDSA keys bind as ES256 does, under thumbprints computed independently.
            for alg in ["RS256", "EdDSA"] {
                let key = Self.keyFile(alg)
                let fresh = try await signUp(client)
                let proof = try await IndependentDPoP.proof(.init(key: key, alg: alg, htm: "POST", htu: token, iat: now))
                let answer = try await Self.token(
                    client, ["grant_type": "refresh_token", "refresh_token": fresh.refreshToken], proof: proof.proof)
                #expect(answer.status == .ok, "\(alg): \(answer.text)")
                let bound = try #require(answer.string("access_token"))
                #expect((try decodeClaims(bound)["cnf"] as? [String: String]) == ["jkt": proof.jkt], "\(alg)")
                let use = try await IndependentDPoP.proof(.init(key: key, alg: alg, htm: "GET", htu: me, iat: now, token: bound))
                #expect(
                    try await client.json(.get, "/v1/me", headers: [.authorization: "DPoP \(bound)", DPoP.proof: use.proof]).status == .ok,
                    "\(alg)")
            }
        }
    }

    @Test(
        "DPOP-3: per client: dpop=required refuses a sign-in without a proof, dpop=off ignores one (bearer tokens); a public client's bearer session is bound by its first refresh with a proof; client credentials bind too, and the admin API refuses the bound token as a bearer token and takes it with its proof; with --dpop-nonces a proof without the nonce gets use_dpop_nonce and DPoP-Nonce, and the retry with it succeeds"
    )
    func policies() async throws {
        guard await Self.hasPyJWT() else { return }
        let server = try await TestServer.startOpen(.sqlite) { $0.dpopNonces = true }
        try await server.createClient(id: "strict", settings: ["email_verification=off", "dpop=required"])
        try await server.createClient(id: "plain", settings: ["email_verification=off", "dpop=off"])
        let backend = try await server.createClient(id: "backend", kind: .confidential)
        let key = Self.keyFile("device")
        let now: @Sendable () -> Int = { [clock = server.clock] in Int(clock.now().timeIntervalSince1970) }
        try await server.withRouter { client in
            let signupURL = Self.base + "/v1/signup"
            func signup(_ clientID: String, proof: String?) async throws -> TestResponse {
                try await client.json(
                    .post, "/v1/signup",
                    [
                        "client_id": clientID, "email": "\(clientID)-\(UUID().uuidString.prefix(6))@example.com",
                        "password": "correct horse battery",
                    ],
                    headers: proof.map { [DPoP.proof: $0] } ?? [:])
            }
            // Nonces on: the first proof has none; the answer hands one out.
            let bare = try await IndependentDPoP.proof(.init(key: key, htm: "POST", htu: signupURL, iat: now()))
            let challenged = try await signup("strict", proof: bare.proof)
            #expect(challenged.status == .badRequest)
            #expect(challenged.string("code") == "use_dpop_nonce", "\(challenged.text)")
            let nonce = try #require(challenged.headers[DPoP.nonce])
            func proof(_ url: String, method: String = "POST", token: String? = nil) async throws -> IndependentDPoP.Proof {
                try await IndependentDPoP.proof(.init(key: key, htm: method, htu: url, iat: now(), token: token, nonce: nonce))
            }
            #expect(try await signup("strict", proof: nil).string("code") == "invalid_dpop_proof")
            let strict = try await signup("strict", proof: try await proof(signupURL).proof)
            #expect(strict.status == .created, "\(strict.text)")
            #expect(strict.string("token_type") == "DPoP")

            let plain = try await signup("plain", proof: try await proof(signupURL).proof)
            #expect(plain.status == .created)
            #expect(plain.string("token_type") == "Bearer")
            #expect(try decodeClaims(try #require(plain.string("access_token")))["cnf"] == nil)

            // A bearer session of a public client: its first refresh with a proof binds it.
            let open = try await signup(TestServer.openClient, proof: nil)
            #expect(open.string("token_type") == "Bearer")
            let tokenURL = Self.base + "/oauth/token"
            let bound = try await Self.token(
                client, ["grant_type": "refresh_token", "refresh_token": try #require(open.string("refresh_token"))],
                proof: try await proof(tokenURL).proof)
            #expect(bound.string("token_type") == "DPoP", "\(bound.text)")
            let unbound = try await Self.token(
                client, ["grant_type": "refresh_token", "refresh_token": try #require(bound.string("refresh_token"))], proof: nil)
            #expect(unbound.string("error") == "invalid_dpop_proof")

            // A protected route asks for the nonce the same way.
            let access = try #require(bound.string("access_token"))
            let noNonce = try await IndependentDPoP.proof(.init(key: key, htm: "GET", htu: Self.base + "/v1/me", iat: now(), token: access))
            let asked = try await client.json(.get, "/v1/me", headers: [.authorization: "DPoP \(access)", DPoP.proof: noNonce.proof])
            #expect(asked.status == .unauthorized)
            #expect(asked.headers[.wwwAuthenticate]?.contains("error=\"use_dpop_nonce\"") == true)
            #expect(asked.headers[DPoP.nonce] != nil)
            let withNonce = try await proof(Self.base + "/v1/me", method: "GET", token: access)
            #expect(
                try await client.json(.get, "/v1/me", headers: [.authorization: "DPoP \(access)", DPoP.proof: withNonce.proof]).status
                    == .ok)

            // A confidential client's own token binds to its proof's key, and the admin API honours it.
            _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(
                id: "backend", settings: [], scopes: ["admin:read"])
            let credentials = try await Self.token(
                client, ["grant_type": "client_credentials", "scope": "admin:read"], proof: try await proof(tokenURL).proof,
                basic: ("backend", backend.secret ?? ""))
            #expect(credentials.string("token_type") == "DPoP", "\(credentials.text)")
            let machine = try #require(credentials.string("access_token"))
            #expect((try decodeClaims(machine)["cnf"] as? [String: String])?["jkt"] != nil)
            let asBearer = try await client.json(.get, "/admin/v1/clients", bearer: machine)
            #expect(asBearer.status == .unauthorized)
            #expect(asBearer.headers[.wwwAuthenticate]?.hasPrefix("DPoP ") == true)
            let adminProof = try await proof(Self.base + "/admin/v1/clients", method: "GET", token: machine)
            let listed = try await client.json(
                .get, "/admin/v1/clients", headers: [.authorization: "DPoP \(machine)", DPoP.proof: adminProof.proof])
            #expect(listed.status == .ok, "\(listed.text)")
        }
    }

    @Test("DPOP-4: a proof used on one node is refused on the other: the jti record is shared through PostgreSQL")
    func replayAcrossNodes() async throws {
        guard TestDatabase.available.contains(.postgres) else { return }
        guard await Self.hasPyJWT() else { return }
        let key = Self.keyFile("device")
        // The proofs carry real time (iat): the nodes' shared clock follows it.
        try await withTwoNodes(prepare: { $0.clock.followRealTime() }) { one, two in
            let signup = try await IndependentDPoP.proof(.init(key: key, htm: "POST", htu: Self.base + "/v1/signup"))
            let answer = try await one.json(
                .post, "/v1/signup",
                ["client_id": TestServer.openClient, "email": "two-nodes@example.com", "password": "correct horse battery"],
                headers: [DPoP.proof: signup.proof])
            #expect(answer.status == .created, "\(answer.text)")
            let access = try #require(answer.string("access_token"))
            let use = try await IndependentDPoP.proof(.init(key: key, htm: "GET", htu: Self.base + "/v1/me", token: access))
            let headers: HTTPFields = [.authorization: "DPoP \(access)", DPoP.proof: use.proof]
            #expect(try await one.json(.get, "/v1/me", headers: headers).status == .ok)
            let replay = try await two.json(.get, "/v1/me", headers: headers)
            #expect(replay.status == .unauthorized)
            #expect(replay.string("code") == "invalid_dpop_proof")
            #expect(replay.string("detail")?.contains("used before") == true, "\(replay.text)")
        }
    }

    /// A token-endpoint request with an optional proof.
    static func token(
        _ client: some TestClientProtocol, _ fields: [String: String], proof: String?, basic: (String, String)? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        headers[.contentType] = "application/x-www-form-urlencoded"
        if let proof { headers[DPoP.proof] = proof }
        var fields = fields
        if let (id, secret) = basic {
            headers[.authorization] = "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
        } else if fields["client_id"] == nil {
            fields["client_id"] = TestServer.openClient
        }
        let body = fields.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $1)" }.joined(separator: "&")
        return try await client.executeRequest(uri: "/oauth/token", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    static func token(
        _ client: some TestClientProtocol, _ fields: [String: String], headers: HTTPFields
    ) async throws -> TestResponse {
        try await token(client, fields, proof: nil, headers: headers)
    }
}

/// The header names of RFC 9449.
enum DPoP {
    static let proof = HTTPField.Name("DPoP")!
    static let nonce = HTTPField.Name("DPoP-Nonce")!
}
