import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Authenticator-app codes and recovery codes over HTTP, with codes made by an independent TOTP
/// implementation (PyPI's `pyotp`, which `.ci/run` installs) at the server's clock.
@Suite("Second factors: TOTP and recovery codes")
struct SecondFactorTests {
    static let password = "correct horse battery"

    static func pyotp(_ secret: String, at date: Date) async throws -> String? { try await IndependentTOTP.code(secret, at: date) }

    /// Whether pyotp answers; without it a test says so and is skipped.
    static func hasPyotp() async -> Bool {
        guard await IndependentTOTP.isAvailable() else {
            print("skipped: pip install pyotp to run the TOTP tests against an independent implementation")
            return false
        }
        return true
    }

    @Test(
        "MFA-1: enrol an authenticator app (pyotp codes), confirm it, sign in with a code; a replayed code, a code two steps old, a wrong one and another secret's are refused; a recovery code works once; amr carries otp and mfa",
        arguments: TestDatabase.available)
    func totp(_ database: TestDatabase) async throws {
        guard await Self.hasPyotp() else { return }
        let server = try await TestServer.startOpen(database)
        let clock = server.clock
        try await server.withRouter { client in
            let user = try await signUp(client, email: "totp@example.com", password: Self.password)
            let enrolled = try await client.json(.post, "/v1/me/factors/totp", bearer: user.accessToken)
            #expect(enrolled.status == .created, "\(enrolled.text)")
            let secret = try #require(enrolled.string("secret"))
            let id = try #require(enrolled.string("id"))
            let uri = try #require(enrolled.string("otpauth_uri"))
            #expect(uri.hasPrefix("otpauth://totp/127.0.0.1:totp%40example.com?secret=\(secret)&issuer=127.0.0.1"))
            // Not a factor until confirmed: sign-in asks nothing yet.
            _ = try await logIn(client, email: user.email, password: Self.password)

            let wrong = try await client.json(.post, "/v1/me/factors/\(id)/confirm", ["code": "000000"], bearer: user.accessToken)
            #expect(wrong.status == .unauthorized && wrong.string("code") == "invalid_code")
            let first = try #require(try await Self.pyotp(secret, at: clock.now()))
            let confirmed = try await client.json(.post, "/v1/me/factors/\(id)/confirm", ["code": first], bearer: user.accessToken)
            #expect(confirmed.status == .ok, "\(confirmed.text)")
            let codes = try #require(confirmed.object["recovery_codes"] as? [String])
            #expect(codes.count == 10 && Set(codes).count == 10)
            let listed = try await client.json(.get, "/v1/me/factors", bearer: user.accessToken)
            #expect(listed.object["recovery_codes_left"] as? Int == 10)
            #expect(!listed.text.contains(secret), "the list shows a secret")
            // The operator's export: the factor's kind and dates, never its secret or a code's hash.
            let userID = try #require(try await server.persistence.read { try await $0.users.find(email: "totp@example.com") }?.id)
            let export = try await UserAdmin(services: server.services).export(id: userID, actor: AdminActor(name: "test"))
            let exported = String(decoding: try JSONEncoder().encode(export), as: UTF8.self)
            let object = try JSONSerialization.jsonObject(with: Data(exported.utf8)) as? [String: Any]
            let recovery = (object?["credentials"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "recovery_code" }
            #expect(recovery.count == 10 && recovery.allSatisfy { ($0["identifiers"] as? [String])?.isEmpty == true }, "\(exported)")
            #expect(!exported.contains(secret) && !exported.contains("sealed"), "the export holds a secret")

            // The password alone is a first factor now.
            func waiting() async throws -> (flow: String, factors: [String]) {
                let login = try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": Self.password])
                #expect(login.status == .forbidden && login.string("code") == "mfa_required", "\(login.text)")
                #expect(login.string("access_token") == nil)
                let flow = login.string("flow_id") ?? ""
                #expect(!flow.isEmpty, "no flow_id: \(login.text)")
                return (flow, login.object["factors"] as? [String] ?? [])
            }
            func verify(_ flow: String, _ factor: String, _ code: String) async throws -> TestResponse {
                try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": factor, "code": code])
            }
            let (flow, factors) = try await waiting()
            #expect(factors == ["totp", "recovery_code"])
            // The step that confirmed the app is spent.
            let replayed = try await verify(flow, "totp", first)
            #expect(replayed.status == .unauthorized && replayed.string("code") == "invalid_code", "\(replayed.text)")
            // Another secret's code.
            let stranger = try #require(try await Self.pyotp("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", at: clock.now()))
            if stranger != first {
                #expect(try await verify(flow, "totp", stranger).status == .unauthorized)
            }
            clock.advance(by: 30)
            let next = try #require(try await Self.pyotp(secret, at: clock.now()))
            let signedIn = try await verify(flow, "totp", next)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let access = try #require(signedIn.string("access_token"))
            let claims = try await server.services.tokens.verify(access)
            #expect(claims.amr.contains("pwd") && claims.amr.contains("otp") && claims.amr.contains("mfa"), "\(claims.amr)")
            // Used: the flow is gone, and the same code on a new sign-in is a replay.
            #expect(try await verify(flow, "totp", next).status == .gone)
            let (again, _) = try await waiting()
            #expect(try await verify(again, "totp", next).status == .unauthorized)
            // Two steps old.
            clock.advance(by: 60)
            let old = try #require(try await Self.pyotp(secret, at: clock.now().addingTimeInterval(-60)))
            #expect(try await verify(again, "totp", old).status == .unauthorized)

            // A recovery code works once, in any shape the user types it.
            let recovered = try await verify(again, "recovery_code", codes[0].uppercased())
            #expect(recovered.status == .ok, "\(recovered.text)")
            let (third, _) = try await waiting()
            #expect(try await verify(third, "recovery_code", codes[0]).status == .unauthorized)
            let audit = try await server.persistence.read { try await $0.audit.list(AuditQuery(type: AuditEvent.recoveryCodeUsed)) }
            #expect(audit.count == 1)

            // Bad input: a 4xx problem, never a 5xx.
            for body: [String: any Sendable] in [
                ["flow_id": "nope", "factor": "totp", "code": "123456"], ["flow_id": third, "factor": "sms", "code": "123456"],
                ["flow_id": third, "factor": "totp", "code": String(repeating: "1", count: 65)], ["flow_id": third],
                ["flow_id": UUID().uuidString, "factor": "totp", "code": "123456"],
            ] {
                let answer = try await client.json(.post, "/v1/mfa/verify", body)
                #expect((400..<500).contains(answer.status.code), "\(body): \(answer.status) \(answer.text)")
            }
        }
        await server.stop()
    }

    @Test(
        "MFA-2: 20 concurrent wrong codes on one waiting sign-in: exactly 5 are checked; 5 more on another and the account is refused with 429 and Retry-After until its window passes; one recovery code sent twice at once signs in once",
        arguments: TestDatabase.available)
    func concurrency(_ database: TestDatabase) async throws {
        guard await Self.hasPyotp() else { return }
        let server = try await TestServer.startOpen(database)
        let clock = server.clock
        try await server.withRouter { client in
            let user = try await signUp(client, email: "burst@example.com", password: Self.password)
            let enrolled = try await client.json(.post, "/v1/me/factors/totp", bearer: user.accessToken)
            let secret = try #require(enrolled.string("secret"))
            let id = try #require(enrolled.string("id"))
            let code = try #require(try await Self.pyotp(secret, at: clock.now()))
            let confirmed = try await client.json(.post, "/v1/me/factors/\(id)/confirm", ["code": code], bearer: user.accessToken)
            let codes = try #require(confirmed.object["recovery_codes"] as? [String])
            func flow() async throws -> String {
                let login = try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": Self.password])
                return try #require(login.string("flow_id"))
            }
            func wrong(_ flow: String) async throws -> (Int, String?) {
                let answer = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "totp", "code": "000000"])
                return (answer.status.code, answer.string("code"))
            }

            let burst = try await flow()
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<20 { group.addTask { try await wrong(burst) } }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.1 == "invalid_code" }.count == SecondFactorFlow.maxAttempts, "\(statuses)")
            #expect(statuses.filter { $0.1 == "flow_expired" }.count == 20 - SecondFactorFlow.maxAttempts, "\(statuses)")
            // The account has had 5 answers checked; another sign-in's 5 reach its limit of 10.
            let second = try await flow()
            for _ in 0..<SecondFactorFlow.maxAttempts {
                #expect(try await wrong(second).1 == "invalid_code")
            }
            let limited = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": try await flow(), "factor": "totp", "code": "000000"])
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil, "\(limited.status) \(limited.text)")
            clock.advance(by: FactorAttempts.window + 1)
            let fresh = try #require(try await Self.pyotp(secret, at: clock.now()))
            #expect(
                try await client.json(.post, "/v1/mfa/verify", ["flow_id": try await flow(), "factor": "totp", "code": fresh]).status == .ok
            )

            // One recovery code on two waiting sign-ins at once: one session.
            let (a, b) = (try await flow(), try await flow())
            let both = try await withThrowingTaskGroup(of: Int.self) { group in
                for flow in [a, b] {
                    group.addTask {
                        try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "recovery_code", "code": codes[1]])
                            .status.code
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(both.sorted() == [200, 401], "\(both)")
        }
        await server.stop()
    }

    @Test(
        "MFA-3: once a user has a factor, a session from before it can change neither the password nor the factors (403 reauthentication_required); a session that passed the factor can"
    )
    func sensitiveActions() async throws {
        guard await Self.hasPyotp() else { return }
        let server = try await TestServer.startOpen(.sqlite)
        let clock = server.clock
        try await server.withRouter { client in
            let old = try await signUp(client, email: "steal@example.com", password: Self.password)
            let enrolled = try await client.json(.post, "/v1/me/factors/totp", bearer: old.accessToken)
            let secret = try #require(enrolled.string("secret"))
            let id = try #require(enrolled.string("id"))
            let first = try #require(try await Self.pyotp(secret, at: clock.now()))
            #expect(try await client.json(.post, "/v1/me/factors/\(id)/confirm", ["code": first], bearer: old.accessToken).status == .ok)

            // The session from before the factor: a stolen token of it must not take the account over.
            let change = ["current_password": Self.password, "password": "a brand new passphrase"]
            let refused = try await client.json(.put, "/v1/me/password", change, bearer: old.accessToken)
            #expect(refused.status == .forbidden && refused.string("code") == "reauthentication_required", "\(refused.text)")
            #expect(try await client.json(.delete, "/v1/me/factors/\(id)", bearer: old.accessToken).status == .forbidden)
            #expect(try await client.json(.post, "/v1/me/factors/recovery-codes", bearer: old.accessToken).status == .forbidden)

            let login = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": old.email, "password": Self.password])
            clock.advance(by: 30)
            let code = try #require(try await Self.pyotp(secret, at: clock.now()))
            let passed = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": try #require(login.string("flow_id")), "factor": "totp", "code": code])
            let access = try #require(passed.string("access_token"))
            #expect(try await client.json(.put, "/v1/me/password", change, bearer: access).status == .noContent)
            #expect(try await client.json(.delete, "/v1/me/factors/\(id)", bearer: access).status == .noContent)
        }
        await server.stop()
    }
}
