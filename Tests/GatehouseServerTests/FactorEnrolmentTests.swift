import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// A client that requires a second factor (`mfa=required`): a user without one enrols an authenticator
/// app inside the sign-in, before any session starts; recovery codes come with the first session.
@Suite("Second factors: enrolment before the first session")
struct FactorEnrolmentTests {
    static let password = "correct horse battery"

    @Test(
        "MFA-4: mfa=required: sign-up answers mfa_required with enrol, no session; /v1/mfa/enrol gives the same app until its first code (pyotp) completes the sign-in with 10 recovery codes, is_new, amr otp+mfa and acr 2 in the access token; the next sign-in asks for the factor; a recovery code used is audited and mailed; bad input is 4xx",
        arguments: TestDatabase.available)
    func enrolBeforeFirstSession(_ database: TestDatabase) async throws {
        guard await SecondFactorTests.hasPyotp() else { return }
        let server = try await TestServer.startOpen(database)
        try await server.createClient(id: "strict", settings: ["email_verification=off", "mfa=required"])
        let clock = server.clock
        let email = "first@example.com"
        try await server.withRouter { client in
            let signUp = try await client.json(
                .post, "/v1/signup", ["client_id": "strict", "email": email, "password": Self.password])
            #expect(signUp.status == .forbidden && signUp.string("code") == "mfa_required", "\(signUp.text)")
            #expect(signUp.object["enrol"] as? Bool == true && signUp.object["factors"] as? [String] == ["totp"])
            #expect(signUp.string("access_token") == nil)
            let flow = try #require(signUp.string("flow_id"))
            let userID = try #require(try await server.persistence.read { try await $0.users.find(email: email) }?.id)
            #expect(try await server.persistence.read { try await $0.sessions.listLive(userID: userID, now: clock.now()) }.isEmpty)

            // Only the enrolment completes it.
            let recovery = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "recovery_code", "code": "aaaaa-bbbbb"])
            #expect(recovery.status == .unprocessableContent, "\(recovery.text)")
            let enrolled = try await client.json(.post, "/v1/mfa/enrol", ["flow_id": flow])
            #expect(enrolled.status == .created, "\(enrolled.text)")
            let secret = try #require(enrolled.string("secret"))
            #expect(try await client.json(.post, "/v1/mfa/enrol", ["flow_id": flow]).string("secret") == secret, "a reload must keep the app")
            for body: [String: any Sendable] in [["flow_id": "nope"], ["flow_id": UUID().uuidString], [:]] {
                let answer = try await client.json(.post, "/v1/mfa/enrol", body)
                #expect((400..<500).contains(answer.status.code), "\(body): \(answer.status) \(answer.text)")
            }
            let wrong = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "totp", "code": "000000"])
            #expect(wrong.status == .unauthorized && wrong.string("code") == "invalid_code")

            let code = try #require(try await SecondFactorTests.pyotp(secret, at: clock.now()))
            let done = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "totp", "code": code])
            #expect(done.status == .ok, "\(done.text)")
            #expect(done.object["is_new"] as? Bool == true)
            let codes = try #require(done.object["recovery_codes"] as? [String])
            #expect(codes.count == 10)
            let claims = try decodeClaims(try #require(done.string("access_token")))
            let amr = claims["amr"] as? [String] ?? []
            #expect(amr.contains("pwd") && amr.contains("otp") && amr.contains("mfa"), "\(amr)")
            #expect(claims["acr"] as? String == "2" && claims["auth_time"] as? Int == Int(clock.now().timeIntervalSince1970), "\(claims)")
            let enrolledEvents = try await server.persistence.read { try await $0.audit.list(AuditQuery(type: AuditEvent.factorEnrolled)) }
            #expect(enrolledEvents.count == 1)

            // From now on the factor is asked, not enrolled, and this flow enrols nothing.
            let next = try await client.json(.post, "/v1/login", ["client_id": "strict", "email": email, "password": Self.password])
            #expect(next.string("code") == "mfa_required" && next.object["enrol"] == nil, "\(next.text)")
            #expect(next.object["factors"] as? [String] == ["totp", "recovery_code"])
            let nextFlow = try #require(next.string("flow_id"))
            #expect(try await client.json(.post, "/v1/mfa/enrol", ["flow_id": nextFlow]).status == .unprocessableContent)
            let recovered = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": nextFlow, "factor": "recovery_code", "code": codes[3]])
            #expect(recovered.status == .ok && recovered.object["recovery_codes"] == nil, "\(recovered.text)")
            let used = try await server.persistence.read { try await $0.audit.list(AuditQuery(type: AuditEvent.recoveryCodeUsed)) }
            #expect(used.count == 1)
            try await server.deliverMail()
            let notice = try #require(server.lastMail(to: email, kind: "recovery_code_used"))
            #expect(notice.text.contains("9 left") && !codes.contains { notice.text.contains($0) }, "\(notice.text)")
            // A client without the requirement asks the enrolled factor all the same.
            let open = try await client.json(.post, "/v1/login", ["client_id": TestServer.openClient, "email": email, "password": Self.password])
            #expect(open.string("code") == "mfa_required", "\(open.text)")
        }
        await server.stop()
    }
}
