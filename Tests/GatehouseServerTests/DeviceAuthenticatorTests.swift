import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

/// A device key as the SDK holds one, for driving the HTTP routes directly.
struct TestDevice {
    let deviceID = "dev_" + UUID().uuidString.lowercased()
    let key = P256.Signing.PrivateKey()
    var authenticatorID = ""

    var publicKey: String { Base64URL.encode(key.publicKey.x963Representation) }

    func signature(
        for challenge: TestResponse, clientID: String = TestServer.openClient, with signer: P256.Signing.PrivateKey? = nil
    )
        throws -> String
    {
        let message = DeviceSignature.message(
            challengeID: try #require(challenge.string("challenge_id")), challenge: try #require(challenge.string("challenge")),
            clientID: clientID, deviceID: deviceID, authenticatorID: authenticatorID)
        return Base64URL.encode(try (signer ?? key).signature(for: message).rawRepresentation)
    }
}

extension TestClientProtocol {
    func register(_ device: inout TestDevice, type: String = "pin", customType: String? = nil, bearer: String) async throws -> TestResponse
    {
        var body: [String: any Sendable] = [
            "type": type, "device_id": device.deviceID, "device_name": "Ada's phone", "public_key": device.publicKey,
        ]
        if let customType { body["custom_type"] = customType }
        let response = try await json(.post, "/v1/me/authenticators", body, bearer: bearer)
        if let id = response.string("id") { device.authenticatorID = id }
        return response
    }

    func challenge(_ device: TestDevice, clientID: String = TestServer.openClient) async throws -> TestResponse {
        try await json(.post, "/v1/authenticators/challenge", ["client_id": clientID, "authenticator_id": device.authenticatorID])
    }

    /// A challenge answered with `device`'s key, or with `wrongKey` (a wrong PIN's key).
    func answer(_ device: TestDevice, wrongKey: P256.Signing.PrivateKey? = nil, customData: String? = nil) async throws -> TestResponse {
        let challenge = try await challenge(device)
        #expect(challenge.status == .ok, "challenge: \(challenge.text)")
        var body: [String: any Sendable] = [
            "client_id": TestServer.openClient, "challenge_id": challenge.string("challenge_id") ?? "",
            "signature": try device.signature(for: challenge, with: wrongKey),
        ]
        if let customData { body["custom_data"] = customData }
        return try await json(.post, "/v1/authenticators/authenticate", body)
    }
}

extension TestResponse {
    var counts: [Int?] {
        ["max_failure_count", "previous_failure_count", "remaining_failure_count"].map { object[$0] as? Int }
    }
}

@Suite("Device authenticators")
struct DeviceAuthenticatorTests {
    @Test(
        "Register, authenticate with amr pin, wrong answers counted 3/1/2 then 3/2/1, the third deletes it and ends its sessions",
        arguments: TestDatabase.available)
    func lifecycle(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            var device = TestDevice()
            let registered = try await client.register(&device, bearer: user.accessToken)
            #expect(registered.status == .created, "\(registered.text)")
            #expect(registered.string("type") == "pin")
            #expect(registered.counts[0] == 3)
            #expect(registered.object["key_id"] == nil && registered.object["public_key"] == nil)

            let first = try await client.challenge(device)
            #expect(first.counts == [3, 0, 3])
            let signedIn = try await client.answer(device)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let access = try #require(signedIn.string("access_token"))
            #expect(try decodeClaims(access)["amr"] as? [String] == ["pin"])
            let bound = try #require(signedIn.string("refresh_token"))

            // The sessions list says which device a session came from.
            let sessions = try await client.json(.get, "/v1/me/sessions", bearer: access)
            let list = try #require(sessions.object["sessions"] as? [[String: Any]])
            let fromDevice = try #require(list.first { ($0["amr"] as? [String]) == ["pin"] })
            let shown = try #require(fromDevice["authenticator"] as? [String: Any])
            #expect(shown["device_id"] as? String == device.deviceID && shown["device_name"] as? String == "Ada's phone")

            let wrong = P256.Signing.PrivateKey()
            let miss1 = try await client.answer(device, wrongKey: wrong)
            #expect(miss1.status == .unauthorized && miss1.string("code") == "invalid_authenticator_response")
            #expect(miss1.counts == [3, 1, 2])
            #expect(try await client.challenge(device).counts == [3, 1, 2])
            let miss2 = try await client.answer(device, wrongKey: wrong)
            #expect(miss2.counts == [3, 2, 1])
            #expect(try await client.challenge(device).counts == [3, 2, 1])
            let miss3 = try await client.answer(device, wrongKey: wrong)
            #expect(miss3.status == .unauthorized && miss3.string("code") == "device_deregistered", "\(miss3.text)")
            #expect(miss3.counts == [3, 3, 0])

            // Gone: no challenge, its session's refresh token refused, the listing empty.
            #expect(try await client.challenge(device).string("code") == "device_deregistered")
            #expect(try await refresh(client, bound).status == .badRequest)
            let listed = try await client.json(.get, "/v1/me/authenticators", bearer: user.accessToken)
            #expect((listed.object["authenticators"] as? [Any])?.isEmpty == true)

            // The audit log has each wrong answer, the deletion, and the registration.
            let audit = try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 1000))
            let refusals = audit.filter { $0.type == AuditEvent.signInFailed && $0.method == "device_authenticator" }
            #expect(refusals.filter { $0.reason == "device_deregistered" }.count == 1)
            #expect(refusals.filter { $0.reason == "authenticator_rejected" }.count >= 2)
            #expect(Set(audit.map(\.type)).isSuperset(of: [AuditEvent.authenticatorRegistered, "authenticator.deregistered"]))
        }
    }

    @Test("A success resets the counter", arguments: TestDatabase.available)
    func successResets(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            var device = TestDevice()
            _ = try await client.register(&device, bearer: user.accessToken)
            _ = try await client.answer(device, wrongKey: P256.Signing.PrivateKey())
            _ = try await client.answer(device, wrongKey: P256.Signing.PrivateKey())
            #expect(try await client.answer(device).status == .ok)
            #expect(try await client.challenge(device).counts == [3, 0, 3])
        }
    }

    @Test(
        "20 concurrent wrong signatures: at most the maximum are checked, then the authenticator is gone", arguments: TestDatabase.available
    )
    func concurrentGuesses(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            var device = TestDevice()
            _ = try await client.register(&device, bearer: user.accessToken)
            let registered = device
            // All challenges first, so the 20 answers really race.
            var bodies: [[String: String]] = []
            for _ in 0..<20 {
                let challenge = try await client.challenge(registered)
                bodies.append([
                    "client_id": TestServer.openClient, "challenge_id": try #require(challenge.string("challenge_id")),
                    "signature": try registered.signature(for: challenge, with: P256.Signing.PrivateKey()),
                ])
            }
            let answers = try await withThrowingTaskGroup(of: (Int, String?, [Int?]).self) { group in
                for body in bodies {
                    group.addTask {
                        let response = try await client.json(.post, "/v1/authenticators/authenticate", body)
                        return (Int(response.status.code), response.string("code"), response.counts)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Only answers carrying counts were checked against the key.
            let checked = answers.filter { $0.2[0] != nil }
            #expect(checked.count == 3, "\(answers)")
            #expect(checked.filter { $0.1 == "invalid_authenticator_response" }.compactMap { $0.2[1] }.sorted() == [1, 2])
            #expect(checked.filter { $0.1 == "device_deregistered" }.map(\.2) == [[3, 3, 0]])
            // The rest were never checked: past the maximum, the burst itself spent the authenticator.
            #expect(answers.allSatisfy { $0.0 == 401 }, "\(answers)")
            #expect(answers.filter { $0.1 == "device_deregistered" && $0.2[0] == nil }.count == 17)
            // The right key is too late.
            #expect(try await client.challenge(registered).string("code") == "device_deregistered")
        }
    }

    @Test("A challenge is good for one answer and two minutes", arguments: TestDatabase.available)
    func challengeReplayAndExpiry(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            var device = TestDevice()
            _ = try await client.register(&device, bearer: user.accessToken)
            let challenge = try await client.challenge(device)
            let body: [String: any Sendable] = [
                "client_id": TestServer.openClient, "challenge_id": challenge.string("challenge_id") ?? "",
                "signature": try device.signature(for: challenge),
            ]
            #expect(try await client.json(.post, "/v1/authenticators/authenticate", body).status == .ok)
            let replay = try await client.json(.post, "/v1/authenticators/authenticate", body)
            #expect(replay.status == .unauthorized && replay.string("code") == "challenge_expired")

            let late = try await client.challenge(device)
            server.clock.advance(by: 121)
            let expired = try await client.json(
                .post, "/v1/authenticators/authenticate",
                [
                    "client_id": TestServer.openClient, "challenge_id": late.string("challenge_id") ?? "",
                    "signature": try device.signature(for: late),
                ])
            #expect(expired.string("code") == "challenge_expired")
            // Neither counted as a failure.
            #expect(try await client.challenge(device).counts == [3, 0, 3])
        }
    }

    @Test("Biometric and custom authenticators register and authenticate; custom data reaches the hook, which may refuse")
    func biometricAndCustom() async throws {
        let hook = RecordingHook()
        let server = try await TestServer.startOpen(.sqlite, hooks: FlowHooks([hook]))
        try await server.withRouter { client in
            let user = try await signUp(client)
            var face = TestDevice()
            #expect(try await client.register(&face, type: "biometric", bearer: user.accessToken).status == .created)
            let bio = try await client.answer(face)
            #expect(try decodeClaims(try #require(bio.string("access_token")))["amr"] as? [String] == ["bio"])

            var token = TestDevice()
            let custom = try await client.register(&token, type: "custom", customType: "yubikey", bearer: user.accessToken)
            #expect(custom.string("custom_type") == "yubikey")
            let signedIn = try await client.answer(token, customData: "otp=123456")
            #expect(try decodeClaims(try #require(signedIn.string("access_token")))["amr"] as? [String] == ["custom"])
            #expect(hook.customData.contains("otp=123456"))
            let refused = try await client.answer(token, customData: "otp=000000")
            #expect(refused.status == .unprocessableContent && refused.string("code") == "validation_failed")

            // Deleting one ends its sessions only.
            let listed = try await client.json(.get, "/v1/me/authenticators", bearer: user.accessToken)
            #expect((listed.object["authenticators"] as? [Any])?.count == 2)
            #expect(
                try await client.json(.delete, "/v1/me/authenticators/\(face.authenticatorID)", bearer: user.accessToken).status
                    == .noContent)
            #expect(try await refresh(client, try #require(bio.string("refresh_token"))).status == .badRequest)
            #expect(try await refresh(client, try #require(signedIn.string("refresh_token"))).status == .ok)
            #expect(
                try await client.json(.delete, "/v1/me/authenticators/\(face.authenticatorID)", bearer: user.accessToken).status
                    == .notFound)
        }
    }

    @Test("Bad input on every device route gets a 4xx problem document, and no signature or key reaches the log")
    func badInput() async throws {
        let logs = CapturedLogs()
        let server = try await TestServer.startOpen(.sqlite, logs: logs)
        try await server.createClient(id: "no-devices", settings: ["email_verification=off", "device_authenticators=off"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            let other = try await signUp(client)
            var device = TestDevice()
            _ = try await client.register(&device, bearer: user.accessToken)
            let good: [String: any Sendable] = ["type": "pin", "device_id": "dev_12345678", "public_key": device.publicKey]
            func merged(_ change: [String: any Sendable]) -> [String: any Sendable] { good.merging(change) { $1 } }

            let cases: [(String, HTTPRequest.Method, String, [String: any Sendable]?, String?, Int, String)] = [
                ("no bearer", .post, "/v1/me/authenticators", good, nil, 401, "unauthorized"),
                ("bad type", .post, "/v1/me/authenticators", merged(["type": "retina"]), user.accessToken, 422, "validation_failed"),
                ("bad key", .post, "/v1/me/authenticators", merged(["public_key": "AAAA"]), user.accessToken, 422, "validation_failed"),
                ("short device id", .post, "/v1/me/authenticators", merged(["device_id": "x"]), user.accessToken, 422, "validation_failed"),
                (
                    "custom without type", .post, "/v1/me/authenticators", merged(["type": "custom"]), user.accessToken, 422,
                    "validation_failed"
                ),
                (
                    "pin with custom type", .post, "/v1/me/authenticators", merged(["custom_type": "x"]), user.accessToken, 422,
                    "validation_failed"
                ),
                (
                    "same key again", .post, "/v1/me/authenticators", merged(["device_id": device.deviceID]), user.accessToken, 409,
                    "authenticator_exists"
                ),
                ("another user's", .delete, "/v1/me/authenticators/\(device.authenticatorID)", nil, other.accessToken, 404, "not_found"),
                (
                    "unknown id", .post, "/v1/authenticators/challenge", ["client_id": TestServer.openClient, "authenticator_id": "nope"],
                    nil, 401, "device_deregistered"
                ),
                (
                    "empty id", .post, "/v1/authenticators/challenge", ["client_id": TestServer.openClient, "authenticator_id": ""], nil,
                    422, "validation_failed"
                ),
                (
                    "other client", .post, "/v1/authenticators/challenge",
                    ["client_id": "no-devices", "authenticator_id": device.authenticatorID], nil, 403, "not_enabled"
                ),
                (
                    "unknown client", .post, "/v1/authenticators/challenge",
                    ["client_id": "ghost", "authenticator_id": device.authenticatorID], nil, 400, "invalid_client"
                ),
                (
                    "missing field", .post, "/v1/authenticators/authenticate", ["client_id": TestServer.openClient], nil, 422,
                    "validation_failed"
                ),
                (
                    "bad challenge id", .post, "/v1/authenticators/authenticate",
                    ["client_id": TestServer.openClient, "challenge_id": "x", "signature": String(repeating: "A", count: 86)], nil, 401,
                    "challenge_expired"
                ),
                (
                    "signature not base64url", .post, "/v1/authenticators/authenticate",
                    ["client_id": TestServer.openClient, "challenge_id": UUID().uuidString, "signature": "%%%"], nil, 422,
                    "validation_failed"
                ),
                (
                    "custom data too long", .post, "/v1/authenticators/authenticate",
                    [
                        "client_id": TestServer.openClient, "challenge_id": UUID().uuidString,
                        "signature": String(repeating: "A", count: 86), "custom_data": String(repeating: "x", count: 5000),
                    ], nil, 422, "validation_failed"
                ),
            ]
            for (name, method, path, body, bearer, status, code) in cases {
                let response = try await client.json(method, path, body, bearer: bearer)
                #expect(Int(response.status.code) == status, "\(name): \(response.status) \(response.text)")
                #expect(response.string("code") == code, "\(name): \(response.text)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(name)")
            }
            let malformed = try await client.raw(
                .post, "/v1/authenticators/challenge", body: Array("{".utf8), contentType: "application/json")
            #expect(malformed.status == .badRequest)

            // A sign-in and a failure, then the log holds neither the signature nor the key.
            let challenge = try await client.challenge(device)
            let signature = try device.signature(for: challenge)
            _ = try await client.json(
                .post, "/v1/authenticators/authenticate",
                ["client_id": TestServer.openClient, "challenge_id": challenge.string("challenge_id") ?? "", "signature": signature])
            _ = try await client.answer(device, wrongKey: P256.Signing.PrivateKey())
            let all = logs.all.joined(separator: "\n")
            #expect(!all.contains(signature) && !all.contains(device.publicKey))
            #expect(!all.contains(try #require(challenge.string("challenge"))))
            #expect(all.contains("credential rejected"))
        }
    }
}

extension DeviceAuthenticatorTests {
    @Test(
        "Two nodes on one PostgreSQL: 20 concurrent wrong signatures split across both are checked at most three times",
        .enabled(if: TestDatabase.postgresURL != nil))
    func twoNodes() async throws {
        try await withTwoNodes { one, two in
            let user = try await signUp(one)
            var device = TestDevice()
            #expect(try await two.register(&device, bearer: user.accessToken).status == .created)
            let registered = device
            var calls: [(any TestClientProtocol, [String: String])] = []
            for index in 0..<20 {
                let node: any TestClientProtocol = index.isMultiple(of: 2) ? one : two
                let challenge = try await node.challenge(registered)
                // Answered on the other node than the one that issued the challenge.
                calls.append(
                    (
                        index.isMultiple(of: 2) ? two : one,
                        [
                            "client_id": TestServer.openClient, "challenge_id": try #require(challenge.string("challenge_id")),
                            "signature": try registered.signature(for: challenge, with: P256.Signing.PrivateKey()),
                        ]
                    ))
            }
            let answers = try await withThrowingTaskGroup(of: (String?, [Int?]).self) { group in
                for (node, body) in calls {
                    group.addTask {
                        let response = try await node.json(.post, "/v1/authenticators/authenticate", body)
                        return (response.string("code"), response.counts)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let checked = answers.filter { $0.1[0] != nil }
            #expect(checked.count == 3, "\(answers)")
            #expect(checked.compactMap { $0.1[1] }.sorted() == [1, 2, 3])
            #expect(try await one.challenge(registered).string("code") == "device_deregistered")
            #expect(try await two.challenge(registered).string("code") == "device_deregistered")
        }
    }
}

/// Keeps what custom authenticators sent and refuses `otp=000000`, as an operator's check would.
final class RecordingHook: FlowHook {
    private let seen = Mutex<[String]>([])
    var customData: [String] { seen.withLock { $0 } }

    func before(_ event: HookEvent) async throws -> HookVerdict {
        guard let data = event.customData else { return .allow }
        seen.withLock { $0.append(data) }
        if data == "otp=000000" {
            var result = ValidationResult()
            result.invalidate(field: "custom_data", code: .invalidValue, message: "The token's code is wrong.")
            return .deny(result)
        }
        return .allow
    }
}
