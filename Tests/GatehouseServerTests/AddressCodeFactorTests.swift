import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// A code by mail as the second factor of a user without an authenticator app, where one is required.
@Suite("Second factors: a code by mail")
struct AddressCodeFactorTests {
    static let password = "correct horse battery"

    /// The 6-digit code of the newest `otp` mail to `email`.
    static func mailedCode(_ server: TestServer, _ email: String) async throws -> String {
        try await server.deliverMail()
        let text = try #require(server.lastMail(to: email, kind: "otp")?.text)
        return try #require(text.firstMatch(of: /\b\d{6}\b/).map { String($0.output) })
    }

    @Test(
        "MFA-7: mfa=required offers a user with a proved address and no app a code by mail beside enrolling one: /v1/mfa/send mails it (spaced by the cool-down), the code completes the sign-in once (amr pwd+otp+mfa, no recovery codes); a first factor by mail code is not offered it; a factor not offered is 422; the hosted factor page's send button mails the code that completes the browser's sign-in"
    )
    func codeByMail() async throws {
        let (server, _) = try await Hosted.start()
        try await server.createClient(
            id: "strict", redirectURIs: [Hosted.spa], settings: ["email_verification=off", "mfa=required", "methods=password,email_otp"])
        let email = "mailbox@example.com"
        _ = try await UserAdmin(services: server.services).create(
            UserDraft(email: email, password: Self.password, emailVerified: true), actor: AdminActor(name: "test"))
        try await server.withRouter { client in
            let login = try await client.json(.post, "/v1/login", ["client_id": "strict", "email": email, "password": Self.password])
            #expect(login.string("code") == "mfa_required" && login.object["enrol"] as? Bool == true, "\(login.text)")
            #expect(login.object["factors"] as? [String] == ["email_otp", "totp"], "\(login.text)")
            let flow = try #require(login.string("flow_id"))
            for factor in ["totp", "sms_otp", "recovery_code", ""] {
                let refused = try await client.json(.post, "/v1/mfa/send", ["flow_id": flow, "factor": factor])
                #expect(refused.status == .unprocessableContent, "\(factor): \(refused.status) \(refused.text)")
            }
            let sent = try await client.json(.post, "/v1/mfa/send", ["flow_id": flow, "factor": "email_otp"])
            #expect(sent.status == .accepted && sent.string("sent_to") == "m***@example.com", "\(sent.text)")
            let again = try await client.json(.post, "/v1/mfa/send", ["flow_id": flow, "factor": "email_otp"])
            #expect(again.status == .tooManyRequests && again.headers[.retryAfter] != nil, "\(again.text)")
            let code = try await Self.mailedCode(server, email)
            let wrong = code == "000000" ? "111111" : "000000"
            #expect(try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "email_otp", "code": wrong]).status == .unauthorized)
            let done = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "email_otp", "code": code])
            #expect(done.status == .ok && done.object["recovery_codes"] == nil, "\(done.text)")
            let amr = try decodeClaims(try #require(done.string("access_token")))["amr"] as? [String] ?? []
            #expect(amr.contains("pwd") && amr.contains("otp") && amr.contains("mfa"), "\(amr)")
            // Spent: the next sign-in cannot use it again.
            let next = try await client.json(.post, "/v1/login", ["client_id": "strict", "email": email, "password": Self.password])
            let nextFlow = try #require(next.string("flow_id"))
            #expect(try await client.json(.post, "/v1/mfa/verify", ["flow_id": nextFlow, "factor": "email_otp", "code": code]).status == .unauthorized)

            // A code by mail as the first factor: the mailbox proves nothing new, only an app will do.
            server.clock.advance(by: 120)
            #expect(try await client.json(.post, "/v1/otp", ["client_id": "strict", "email": email]).status == .accepted)
            let first = try await Self.mailedCode(server, email)
            let byCode = try await client.json(.post, "/v1/otp/verify", ["client_id": "strict", "email": email, "code": first])
            #expect(byCode.string("code") == "mfa_required" && byCode.object["factors"] as? [String] == ["totp"], "\(byCode.text)")

            // The hosted page: the send button mails the code; the code signs the browser in.
            server.clock.advance(by: 120)
            let jar = HostedJar(client)
            let pkce = pkcePair()
            let page = try await Hosted.signIn(jar, Hosted.request("strict", challenge: pkce.challenge), email: email, password: Self.password)
            #expect(page.text.contains("id=\"send-email_otp\"") && page.text.contains("id=\"totp-qr\""), "\(page.text)")
            let sentPage = try await jar.submit(
                try #require(HostedJar.action(page, form: "factor-send-email_otp")), [("factor", "email_otp")], csrf: HostedJar.csrf(page))
            #expect(sentPage.status == .ok && sentPage.text.contains("id=\"factor-sent\"") && sentPage.text.contains("m***@example.com"))
            let mailed = try await Self.mailedCode(server, email)
            let answer = try await jar.submit(
                try #require(HostedJar.action(sentPage, form: "factor")), [("factor", "email_otp"), ("code", mailed)],
                csrf: HostedJar.csrf(sentPage))
            let code2 = try #require(HostedJar.query(answer)["code"], "\(answer.status) \(answer.text)")
            let tokens = try await Hosted.exchange(client, code: code2, verifier: pkce.verifier, id: "strict")
            let id = try decodeClaims(try #require(tokens.string("id_token")))
            #expect(id["acr"] as? String == "2", "\(id)")
        }
        await server.stop()
    }
}
