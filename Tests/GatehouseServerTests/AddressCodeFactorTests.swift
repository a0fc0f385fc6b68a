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
            #expect(
                try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "email_otp", "code": wrong]).status
                    == .unauthorized)
            let done = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "email_otp", "code": code])
            #expect(done.status == .ok && done.object["recovery_codes"] == nil, "\(done.text)")
            let amr = try decodeClaims(try #require(done.string("access_token")))["amr"] as? [String] ?? []
            #expect(amr.contains("pwd") && amr.contains("otp") && amr.contains("mfa"), "\(amr)")
            // Spent: the next sign-in cannot use it again.
            let next = try await client.json(.post, "/v1/login", ["client_id": "strict", "email": email, "password": Self.password])
            let nextFlow = try #require(next.string("flow_id"))
            #expect(
                try await client.json(.post, "/v1/mfa/verify", ["flow_id": nextFlow, "factor": "email_otp", "code": code]).status
                    == .unauthorized)

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
            let page = try await Hosted.signIn(
                jar, Hosted.request("strict", challenge: pkce.challenge), email: email, password: Self.password)
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

extension AddressCodeFactorTests {
    @Test(
        "MFA-12: a user whose proved address is a phone gets sms_otp (not email_otp for an unproved email): /v1/mfa/send texts the code through the SMS gateway and the code completes the sign-in (amr pwd+sms+mfa)"
    )
    func codeByText() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.createClient(id: "strict", settings: ["email_verification=off", "mfa=required"])
        let email = "texted@example.com"
        let phone = "+4791234567"
        _ = try await UserAdmin(services: server.services).create(
            UserDraft(email: email, phone: phone, password: Self.password, phoneVerified: true), actor: AdminActor(name: "test"))
        try await server.withRouter { client in
            let login = try await client.json(.post, "/v1/login", ["client_id": "strict", "email": email, "password": Self.password])
            #expect(login.object["factors"] as? [String] == ["sms_otp", "totp"], "\(login.text)")
            let flow = try #require(login.string("flow_id"))
            #expect(try await client.json(.post, "/v1/mfa/send", ["flow_id": flow, "factor": "email_otp"]).status == .unprocessableContent)
            let sent = try await client.json(.post, "/v1/mfa/send", ["flow_id": flow, "factor": "sms_otp"])
            #expect(sent.status == .accepted, "\(sent.text)")
            try await server.deliverMail()
            let message = try #require(server.lastMail(to: phone, kind: "otp"))
            #expect(message.channel == .sms)
            let code = try #require(message.text.firstMatch(of: /\b\d{6}\b/).map { String($0.output) })
            let done = try await client.json(.post, "/v1/mfa/verify", ["flow_id": flow, "factor": "sms_otp", "code": code])
            #expect(done.status == .ok, "\(done.text)")
            let amr = try decodeClaims(try #require(done.string("access_token")))["amr"] as? [String] ?? []
            #expect(amr == ["pwd", "sms", "mfa"], "\(amr)")
        }
        await server.stop()
    }
}

/// A device authenticator as two factors: the key on the device and the PIN or biometric that unlocks it.
@Suite("Second factors: device authenticators")
struct DeviceFactorTests {
    @Test(
        "MFA-8: a PIN authenticator registered from a session that passed the user's app signs in without asking for the app (amr pin, swk, mfa; acr 2); one registered before the app was added is asked for it; a session from before the app cannot register one (403 reauthentication_required)"
    )
    func deviceCountsAsTwo() async throws {
        guard await SecondFactorTests.hasPyotp() else { return }
        let server = try await TestServer.startOpen(.sqlite)
        let clock = server.clock
        try await server.withRouter { client in
            let user = try await signUp(client, email: "device@example.com")
            // A key registered while the account had one factor.
            var early = TestDevice()
            #expect(try await client.register(&early, bearer: user.accessToken).status == .created)

            let enrolled = try await client.json(.post, "/v1/me/factors/totp", bearer: user.accessToken)
            let secret = try #require(enrolled.string("secret"))
            let first = try #require(try await SecondFactorTests.pyotp(secret, at: clock.now()))
            #expect(
                try await client.json(
                    .post, "/v1/me/factors/\(try #require(enrolled.string("id")))/confirm", ["code": first], bearer: user.accessToken
                ).status == .ok)

            var refused = TestDevice()
            let stale = try await client.register(&refused, bearer: user.accessToken)
            #expect(stale.status == .forbidden && stale.string("code") == "reauthentication_required", "\(stale.text)")

            // The early key is one factor: the app is asked.
            let earlySignIn = try await client.answer(early)
            #expect(earlySignIn.string("code") == "mfa_required", "\(earlySignIn.text)")

            // A session that passed the app registers a key that stands for both factors.
            let login = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password])
            clock.advance(by: 30)
            let code = try #require(try await SecondFactorTests.pyotp(secret, at: clock.now()))
            let strong = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": try #require(login.string("flow_id")), "factor": "totp", "code": code])
            let strongToken = try #require(strong.string("access_token"), "\(strong.text)")
            var device = TestDevice()
            #expect(try await client.register(&device, bearer: strongToken).status == .created)
            let signedIn = try await client.answer(device)
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let claims = try decodeClaims(try #require(signedIn.string("access_token")))
            #expect(claims["amr"] as? [String] == ["pin", "swk", "mfa"] && claims["acr"] as? String == "2", "\(claims)")
        }
        await server.stop()
    }
}
