import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Passkeys over HTTP, with every authenticator response made by python-fido2 and `cryptography`
/// (`IndependentAuthenticator`), never by Gatehouse.
@Suite("Passkeys over HTTP")
struct PasskeyTests {
    static let rpID = "login.example.test"
    static let origin = "https://login.example.test"
    static let client = "passkey-app"

    static func start(_ database: TestDatabase, roots: [String] = []) async throws -> TestServer {
        let server = try await TestServer.start(database) { configuration in
            configuration.passkeys.rpID = rpID
            configuration.passkeys.origins = [origin]
            configuration.passkeys.appleAppIDs = ["ABCDE12345.com.example.app"]
            configuration.passkeys.androidApps = [
                .init(packageName: "com.example.app", fingerprints: [String(repeating: "AB:", count: 31) + "AB"])
            ]
            if !roots.isEmpty {
                let certificates = roots.flatMap { (try? AttestationRoots.certificates(pem: $0)) ?? [] }
                configuration.passkeys.attestationRoots = AttestationRoots(packed: certificates, apple: certificates)
            }
        }
        try await server.createClient(id: client, settings: ["email_verification=off", "methods=password,passkey"])
        try await server.createClient(id: "strict-app", settings: ["email_verification=off", "methods=password,passkey", "mfa=required"])
        try await server.createClient(id: "no-passkeys", settings: ["email_verification=off"])
        return server
    }

    static func available() async -> Bool {
        guard await IndependentAuthenticator.isAvailable() else {
            print("skipped: pip install fido2 cryptography to run the passkey tests against an independent authenticator")
            return false
        }
        return true
    }

    /// A registered passkey: the script's credential (its private key) and the user handle.
    struct Registered {
        var credential: IndependentAuthenticator.Credential
        var userHandle: String
        var id: String
    }

    static func registrationOptions(
        _ client: some TestClientProtocol, bearer: String
    ) async throws -> (flow: String, options: [String: Any]) {
        let options = try await client.json(.post, "/v1/passkeys/registration/options", [:], bearer: bearer)
        #expect(options.status == .ok, "\(options.text)")
        return (options.string("flow_id") ?? "", options.object["public_key"] as? [String: Any] ?? [:])
    }

    static func body(_ credential: IndependentAuthenticator.Credential, flow: String, name: String? = nil) -> [String: any Sendable] {
        var body: [String: any Sendable] = [
            "flow_id": flow,
            "credential": [
                "id": credential.credentialID, "rawId": credential.credentialID, "type": "public-key",
                "response": [
                    "clientDataJSON": credential.response["clientDataJSON"]!,
                    "attestationObject": credential.response["attestationObject"]!, "transports": ["internal", "hybrid", "carrier-pigeon"],
                ] as [String: any Sendable],
            ] as [String: any Sendable],
        ]
        if let name { body["name"] = name }
        return body
    }

    static func register(
        _ client: some TestClientProtocol, bearer: String, alg: Int = -7, fmt: String = "none", root: IndependentAuthenticator.Root? = nil
    ) async throws -> Registered {
        let (flow, options) = try await registrationOptions(client, bearer: bearer)
        let challenge = try #require(options["challenge"] as? String)
        let handle = try #require((options["user"] as? [String: Any])?["id"] as? String)
        let made = try await IndependentAuthenticator.create([
            .create(rpID: rpID, origin: origin, challenge: challenge, alg: alg, fmt: fmt, root: root)
        ])[0]
        let registered = try await client.json(.post, "/v1/passkeys/registration", body(made, flow: flow, name: "Laptop"), bearer: bearer)
        #expect(registered.status == .created, "\(registered.text)")
        return Registered(credential: made, userHandle: handle, id: registered.string("id") ?? "")
    }

    static func authenticationOptions(_ client: some TestClientProtocol, clientID: String = client) async throws -> (String, String) {
        let options = try await client.json(.post, "/v1/passkeys/authentication/options", ["client_id": clientID])
        #expect(options.status == .ok, "\(options.text)")
        let publicKey = options.object["public_key"] as? [String: Any] ?? [:]
        return (options.string("flow_id") ?? "", publicKey["challenge"] as? String ?? "")
    }

    static func assertionBody(
        _ assertion: IndependentAuthenticator.Assertion, credentialID: String, flow: String, clientID: String = client
    ) -> [String: any Sendable] {
        var response: [String: any Sendable] = [
            "clientDataJSON": assertion.response["clientDataJSON"]!!, "authenticatorData": assertion.response["authenticatorData"]!!,
            "signature": assertion.response["signature"]!!,
        ]
        if let handle = assertion.response["userHandle"] ?? nil { response["userHandle"] = handle }
        return [
            "client_id": clientID, "flow_id": flow,
            "credential": ["id": credentialID, "rawId": credentialID, "type": "public-key", "response": response] as [String: any Sendable],
        ]
    }

    /// Signs in with `registered` (counter `signCount`), changing the spec as a test needs.
    static func signIn(
        _ client: some TestClientProtocol, _ registered: Registered, signCount: UInt32, clientID: String = client,
        change: (inout IndependentAuthenticator.Spec) -> Void = { _ in }
    ) async throws -> TestResponse {
        let (flow, challenge) = try await authenticationOptions(client, clientID: clientID)
        var spec = IndependentAuthenticator.Spec.get(
            rpID: rpID, origin: origin, challenge: challenge, credential: registered.credential, signCount: signCount)
        spec.userHandle = registered.userHandle
        change(&spec)
        let assertion = try await IndependentAuthenticator.get([spec])[0]
        return try await client.json(
            .post, "/v1/passkeys/authentication",
            assertionBody(assertion, credentialID: registered.credential.credentialID, flow: flow, clientID: clientID))
    }

    static func passkeyRows(_ server: TestServer, userID: String) async throws -> [CredentialRecord] {
        let id = try #require(UUID(uuidString: userID))
        return try await server.persistence.read { try await $0.credentials.list(userID: id, type: .passkey) }
    }

    @Test(
        "PK-3: a signed-in user registers a passkey (python-fido2 response) and lists it; a usernameless sign-in with it answers tokens whose amr holds hwk, user and mfa and whose sub is that user, the counter stored moves forward, and on a client with mfa=required the passkey alone signs in while the password answers mfa_required; the options name the RP, a random user handle (not the user id or email) and exclude the registered credential; only WebAuthn's transports are kept",
        arguments: TestDatabase.available)
    func registerAndSignIn(_ database: TestDatabase) async throws {
        guard await Self.available() else { return }
        let server = try await Self.start(database)
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: Self.client)
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let registered = try await Self.register(client, bearer: user.accessToken)

            let listed = try await client.json(.get, "/v1/me/passkeys", bearer: user.accessToken)
            let passkeys = try #require(try JSONSerialization.jsonObject(with: Data(listed.text.utf8)) as? [[String: Any]])
            #expect(passkeys.count == 1 && passkeys[0]["name"] as? String == "Laptop" && passkeys[0]["attestation"] as? String == "none")
            #expect(passkeys[0]["transports"] as? [String] == ["hybrid", "internal"], "\(listed.text)")

            // The next options: the same handle, the registered credential excluded.
            let (_, options) = try await Self.registrationOptions(client, bearer: user.accessToken)
            let handle = try #require((options["user"] as? [String: Any])?["id"] as? String)
            #expect(handle == registered.userHandle)
            #expect(Base64URL.decode(handle)?.count == 32 && !handle.contains(userID) && handle != Base64URL.encode(Array(userID.utf8)))
            #expect((options["rp"] as? [String: Any])?["id"] as? String == Self.rpID)
            let excluded = (options["excludeCredentials"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(excluded == [registered.credential.credentialID])
            #expect((options["pubKeyCredParams"] as? [[String: Any]] ?? []).compactMap { $0["alg"] as? Int } == [-7, -8, -257])

            let signedIn = try await Self.signIn(client, registered, signCount: 5)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let claims = try decodeClaims(try #require(signedIn.string("access_token")))
            #expect(claims["sub"] as? String == userID)
            #expect(Set(claims["amr"] as? [String] ?? []) == ["hwk", "user", "mfa"], "\(claims)")
            #expect(claims["acr"] as? String == "2")
            let row = try #require(try await Self.passkeyRows(server, userID: userID).first)
            let config = try row.decodeConfig(PasskeyStrategy.Config.self)
            #expect(config.signCount == 5 && config.lastUsedAt != nil)

            // mfa=required: the passkey is enough; the password is not.
            let strict = try await Self.signIn(client, registered, signCount: 6, clientID: "strict-app")
            #expect(strict.status == .ok && strict.string("access_token") != nil, "\(strict.text)")
            let password = try await client.json(
                .post, "/v1/login", ["client_id": "strict-app", "email": user.email, "password": user.password])
            #expect(password.status == .forbidden && password.string("code") == "mfa_required", "\(password.text)")

            // A client that does not offer passkeys gives no challenge.
            let off = try await client.json(.post, "/v1/passkeys/authentication/options", ["client_id": "no-passkeys"])
            #expect(off.status == .forbidden && off.string("code") == "not_enabled", "\(off.text)")
        }
    }

    /// A none attestation over a credential key whose algorithm is ES384 (-35), built by hand: no
    /// authenticator library makes one for an RP that asked for -7, -8 and -257.
    static func es384Registration(challenge: String, credentialID: [UInt8]) -> (clientData: [UInt8], attestation: [UInt8]) {
        let clientData = Array(
            #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
        let key = TestCBOR.encode(
            .map([
                .init(key: .unsigned(1), value: .unsigned(2)), .init(key: .unsigned(3), value: .negative(34)),
                .init(key: .negative(0), value: .unsigned(2)), .init(key: .negative(1), value: .bytes([UInt8](repeating: 1, count: 48))),
                .init(key: .negative(2), value: .bytes([UInt8](repeating: 2, count: 48))),
            ]))
        let authData =
            Array(SHA256.hash(data: Array(rpID.utf8))) + [0x45, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16)
            + [0, UInt8(credentialID.count)] + credentialID + key
        let attestation = TestCBOR.encode(
            .map([
                .init(key: .text("fmt"), value: .text("none")), .init(key: .text("attStmt"), value: .map([])),
                .init(key: .text("authData"), value: .bytes(authData)),
            ]))
        return (clientData, attestation)
    }

    @Test(
        "PK-4: refused with a 4xx and nothing stored: registrations with a wrong origin, another RP ID's hash, the sign-in type, a foreign challenge, a replayed or another user's challenge, no user verification, truncated or over-long CBOR, an unknown COSE algorithm, bad base64url, an already registered credential; sign-ins with a wrong origin, no user verification, no user handle, another credential's handle, a bad signature, an unknown credential, a replayed or another client's challenge, and a counter gone backwards, which also flags the passkey (no sign-in with it after that) and audits it",
        arguments: TestDatabase.available)
    func refusals(_ database: TestDatabase) async throws {
        guard await Self.available() else { return }
        let server = try await Self.start(database)
        try await server.withRouter { client in
            let user = try await signUp(client, clientID: Self.client)
            let other = try await signUp(client, clientID: Self.client)
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)

            // Registrations: each spec changed one way; each must be refused and store nothing.
            func refusedRegistration(
                _ name: String, status: HTTPResponse.Status = .badRequest, code: String = "invalid_passkey", detail: String? = nil,
                bearer: String? = nil, flowFrom: String? = nil, change: (inout IndependentAuthenticator.Spec) -> Void = { _ in },
                mutate: ([UInt8]) -> [UInt8] = { $0 }
            ) async throws {
                let (flow, options) = try await Self.registrationOptions(client, bearer: flowFrom ?? user.accessToken)
                var spec = IndependentAuthenticator.Spec.create(
                    rpID: Self.rpID, origin: Self.origin, challenge: options["challenge"] as? String ?? "")
                change(&spec)
                var made = try await IndependentAuthenticator.create([spec])[0]
                made.response["attestationObject"] = Base64URL.encode(mutate(Base64URL.decode(made.response["attestationObject"]!)!))
                let answer = try await client.json(
                    .post, "/v1/passkeys/registration", Self.body(made, flow: flow), bearer: bearer ?? user.accessToken)
                #expect(answer.status == status && answer.string("code") == code, "\(name): \(answer.text)")
                if let detail { #expect(answer.string("detail")?.contains(detail) == true, "\(name): \(answer.text)") }
            }
            try await refusedRegistration("origin", detail: "origin https://evil.example.test is not allowed") {
                $0.origin = "https://evil.example.test"
            }
            try await refusedRegistration("rp id", detail: "another RP ID") { $0.hashRPID = "example.test" }
            try await refusedRegistration("type", detail: "type is not webauthn.create") { $0.type = "webauthn.get" }
            try await refusedRegistration("foreign challenge", detail: "challenge is not the one issued") {
                $0.challenge = Base64URL.encode(Secrets.randomBytes(32))
            }
            try await refusedRegistration("user verification", detail: "the user was not verified") { $0.uv = false }
            try await refusedRegistration("truncated", detail: "the CBOR ends inside an item", mutate: { Array($0.dropLast(7)) })
            try await refusedRegistration("over-long", detail: "1 bytes follow the CBOR item", mutate: { $0 + [0xf6] })
            // Another user's challenge: the flow is theirs.
            try await refusedRegistration(
                "another user's flow", status: .unauthorized, code: "challenge_expired", flowFrom: other.accessToken)

            // A replayed challenge: the flow is spent by its first answer, even a refused one.
            let (flow, options) = try await Self.registrationOptions(client, bearer: user.accessToken)
            let challenge = try #require(options["challenge"] as? String)
            var spec = IndependentAuthenticator.Spec.create(rpID: Self.rpID, origin: "https://evil.example.test", challenge: challenge)
            let bad = try await IndependentAuthenticator.create([spec])[0]
            let first = try await client.json(.post, "/v1/passkeys/registration", Self.body(bad, flow: flow), bearer: user.accessToken)
            #expect(first.status == .badRequest)
            spec.origin = Self.origin
            let good = try await IndependentAuthenticator.create([spec])[0]
            let replayed = try await client.json(.post, "/v1/passkeys/registration", Self.body(good, flow: flow), bearer: user.accessToken)
            #expect(replayed.status == .unauthorized && replayed.string("code") == "challenge_expired", "\(replayed.text)")

            // An unknown COSE algorithm (ES384), and base64url that is not.
            let (es384Flow, es384Options) = try await Self.registrationOptions(client, bearer: user.accessToken)
            let id = Secrets.randomBytes(16)
            let es384 = Self.es384Registration(challenge: es384Options["challenge"] as? String ?? "", credentialID: id)
            let crafted = IndependentAuthenticator.Credential(
                credentialID: Base64URL.encode(id), privateKeyPEM: "", alg: -35, rootPEM: nil,
                response: ["clientDataJSON": Base64URL.encode(es384.clientData), "attestationObject": Base64URL.encode(es384.attestation)])
            let unknownAlg = try await client.json(
                .post, "/v1/passkeys/registration", Self.body(crafted, flow: es384Flow), bearer: user.accessToken)
            #expect(
                unknownAlg.status == .badRequest && unknownAlg.string("detail")?.contains("COSE algorithm -35") == true,
                "\(unknownAlg.text)")
            var garbled = Self.body(crafted, flow: es384Flow)
            garbled["credential"] =
                [
                    "id": "not base64url!", "rawId": "not base64url!", "type": "public-key",
                    "response": ["clientDataJSON": "x", "attestationObject": "==="],
                ] as [String: any Sendable]
            let malformed = try await client.json(.post, "/v1/passkeys/registration", garbled, bearer: user.accessToken)
            #expect(malformed.status == .unprocessableContent || malformed.status == .badRequest, "\(malformed.text)")
            #expect(try await Self.passkeyRows(server, userID: userID).isEmpty, "a refused registration stored a passkey")

            // A registered passkey cannot be registered twice (not even by another user).
            let registered = try await Self.register(client, bearer: user.accessToken)
            let (againFlow, _) = try await Self.registrationOptions(client, bearer: other.accessToken)
            let again = try await client.json(
                .post, "/v1/passkeys/registration", Self.body(registered.credential, flow: againFlow), bearer: other.accessToken)
            #expect(again.status.code / 100 == 4, "\(again.text)")
            #expect(try await Self.passkeyRows(server, userID: userID).count == 1)

            // Sign-ins.
            let uuid = try #require(UUID(uuidString: userID))
            func sessions() async throws -> Int {
                try await server.persistence.read { try await $0.sessions.listLive(userID: uuid, now: server.clock.now()) }.count
            }
            let before = try await sessions()
            func refusedSignIn(
                _ name: String, status: HTTPResponse.Status, code: String, detail: String? = nil, signCount: UInt32 = 10,
                change: (inout IndependentAuthenticator.Spec) -> Void
            ) async throws {
                let answer = try await Self.signIn(client, registered, signCount: signCount, change: change)
                #expect(answer.status == status && answer.string("code") == code, "\(name): \(answer.text)")
                if let detail { #expect(answer.string("detail")?.contains(detail) == true, "\(name): \(answer.text)") }
            }
            try await refusedSignIn("origin", status: .badRequest, code: "invalid_passkey", detail: "is not allowed") {
                $0.origin = "https://evil.example.test"
            }
            try await refusedSignIn("user verification", status: .badRequest, code: "invalid_passkey", detail: "not verified") {
                $0.uv = false
            }
            try await refusedSignIn("no user handle", status: .badRequest, code: "invalid_passkey", detail: "user handle") {
                $0.userHandle = nil
            }
            try await refusedSignIn("another handle", status: .unauthorized, code: "invalid_credentials") {
                $0.userHandle = Base64URL.encode(Secrets.randomBytes(32))
            }
            let stranger = try await IndependentAuthenticator.create([.create(rpID: Self.rpID, origin: Self.origin, challenge: "AAAA")])[0]
            try await refusedSignIn("bad signature", status: .unauthorized, code: "invalid_credentials") {
                $0.privateKeyPEM = stranger.privateKeyPEM
            }
            var unknown = registered
            unknown.credential.credentialID = stranger.credentialID
            let unknownAnswer = try await Self.signIn(client, unknown, signCount: 10)
            #expect(unknownAnswer.status == .unauthorized && unknownAnswer.string("code") == "invalid_credentials", "\(unknownAnswer.text)")

            // Replayed: a good assertion sent twice; the second finds its challenge spent.
            let (replayFlow, replayChallenge) = try await Self.authenticationOptions(client)
            var replaySpec = IndependentAuthenticator.Spec.get(
                rpID: Self.rpID, origin: Self.origin, challenge: replayChallenge, credential: registered.credential, signCount: 3)
            replaySpec.userHandle = registered.userHandle
            let replayAssertion = try await IndependentAuthenticator.get([replaySpec])[0]
            let replayBody = Self.assertionBody(replayAssertion, credentialID: registered.credential.credentialID, flow: replayFlow)
            let once = try await client.json(.post, "/v1/passkeys/authentication", replayBody)
            #expect(once.status == .ok, "\(once.text)")
            let twice = try await client.json(.post, "/v1/passkeys/authentication", replayBody)
            #expect(twice.status == .unauthorized && twice.string("code") == "challenge_expired", "\(twice.text)")
            // Another client's challenge.
            let (strictFlow, strictChallenge) = try await Self.authenticationOptions(client, clientID: "strict-app")
            replaySpec.challenge = strictChallenge
            replaySpec.signCount = 4
            let foreign = try await IndependentAuthenticator.get([replaySpec])[0]
            let foreignAnswer = try await client.json(
                .post, "/v1/passkeys/authentication",
                Self.assertionBody(foreign, credentialID: registered.credential.credentialID, flow: strictFlow))
            #expect(foreignAnswer.status == .unauthorized && foreignAnswer.string("code") == "challenge_expired", "\(foreignAnswer.text)")

            // The counter stands at 3: 3 again (a clone's, or a replay's) is refused and flags the passkey.
            try await refusedSignIn("counter", status: .unauthorized, code: "invalid_credentials", signCount: 3) { _ in }
            #expect(try await sessions() == before + 1, "a refused sign-in started a session")
            let row = try #require(try await Self.passkeyRows(server, userID: userID).first)
            let config = try row.decodeConfig(PasskeyStrategy.Config.self)
            #expect(config.flagged == "counter_went_backwards" && config.signCount == 3)
            let flagged = try await server.persistence.read { try await $0.audit.list(AuditQuery(type: AuditEvent.credentialFlagged)) }
            #expect(flagged.count == 1 && flagged.first?.userID == uuid && flagged.first?.method == "passkey")
            // Flagged, it signs nobody in, whatever the counter says.
            try await refusedSignIn("flagged", status: .unauthorized, code: "invalid_credentials", signCount: 100) { _ in }
            #expect(try await sessions() == before + 1)
        }
    }
}
