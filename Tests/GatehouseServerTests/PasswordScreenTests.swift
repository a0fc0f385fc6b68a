import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("New passwords: the common list, personal data, the breach range service")
struct PasswordScreenTests {
    static func fieldCode(_ response: TestResponse) -> String? {
        ((response.object["errors"] as? [[String: Any]])?.first { $0["field"] as? String == "password" })?["code"] as? String
    }

    @Test(
        "PWS-2: a common password, one with digits added, and one holding the user's email or the app's name are refused at sign-up, password change and the hosted reset and sign-up pages, each page in the browser's language"
    )
    func commonAndPersonalRefusedEverywhere() async throws {
        let (server, _) = try await Hosted.start()
        _ = try await server.createClient(id: "moonbeam", settings: ["email_verification=off"])
        try await server.withRouter { client in
            for (password, code) in [
                ("password123", "common_password"), ("ILoveYou2024!", "common_password"), ("qwertyuiop", "common_password"),
                ("Grace.Hopper-1906", "contains_personal_data"), ("my grace.hopper@example.com", "contains_personal_data"),
                ("MoonBeam rocks 42", "contains_personal_data"),
            ] {
                let refused = try await client.json(
                    .post, "/v1/signup", ["client_id": "moonbeam", "email": "grace.hopper@example.com", "password": password])
                #expect(refused.status == .unprocessableContent, "\(password): \(refused.text)")
                #expect(Self.fieldCode(refused) == code, "\(password): \(refused.text)")
            }
            #expect(try await server.persistence.read { try await $0.users.find(email: "grace.hopper@example.com") } == nil)
            let user = try await signUp(
                client, email: "grace.hopper@example.com", password: "a quiet orchard at dawn", clientID: "moonbeam")

            // Password change (also the API's way to finish a recovery by code).
            let change = try await client.json(
                .put, "/v1/me/password", ["password": "letmein2024", "current_password": "a quiet orchard at dawn"],
                bearer: user.accessToken)
            #expect(change.status == .unprocessableContent && Self.fieldCode(change) == "common_password", "\(change.text)")
            let named = try await client.json(
                .put, "/v1/me/password", ["password": "moonbeam forever", "current_password": "a quiet orchard at dawn"],
                bearer: user.accessToken)
            #expect(Self.fieldCode(named) == "contains_personal_data", "\(named.text)")

            // The hosted reset page, in English and in Norwegian; the link is not used up by a refusal.
            _ = try await client.json(.post, "/v1/recovery", ["client_id": "moonbeam", "email": user.email])
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: user.email, kind: "recovery")?.linkPath("/reset?token="))
            let token = try #require(URLComponents(string: path)?.queryItems?.first { $0.name == "token" }?.value)
            for (language, text) in [("en", "This password is too common."), ("nb", "Dette passordet er for vanlig.")] {
                let jar = HostedJar(client)
                jar.acceptLanguage = language
                let form = try await jar.open(path)
                let refused = try await jar.submit(
                    "/reset", [("token", token), ("password", "baseball12345"), ("confirm", "baseball12345")], csrf: HostedJar.csrf(form))
                #expect(refused.status == .unprocessableContent && refused.text.contains(text), "\(language): \(refused.text)")
            }
            let jar = HostedJar(client)
            let form = try await jar.open(path)
            let reset = try await jar.submit(
                "/reset", [("token", token), ("password", "a lantern by the pier"), ("confirm", "a lantern by the pier")],
                csrf: HostedJar.csrf(form))
            #expect(reset.status == .ok, "\(reset.text)")

            // The hosted sign-up page, in Norwegian.
            let browser = HostedJar(client)
            browser.acceptLanguage = "nb"
            let page = try await browser.open(Hosted.request(challenge: pkcePair().challenge))
            let signupPage = try await browser.open(try #require(HostedJar.attribute(page.text, after: "id=\"signup-link\" href=\"")))
            let refused = try await browser.submit(
                try #require(HostedJar.action(signupPage, form: "signup")),
                [("email", "page-user@example.com"), ("password", "sunshine2024")],
                csrf: HostedJar.csrf(signupPage))
            #expect(refused.status == .unprocessableContent && refused.text.contains("Dette passordet er for vanlig."), "\(refused.text)")
        }
    }

    @Test(
        "PWS-3: the password range service (a stand-in) is asked with the first five hex digits of the SHA-1 and nothing else; a password it knows is refused at sign-up and change, one it does not know is taken; while it is down sign-up goes on and a warning without the password is logged"
    )
    func rangeService() async throws {
        let breached = "tangerine kettle 1987"
        let hex = Insecure.SHA1.hash(data: Data(breached.utf8)).map { String(format: "%02X", $0) }.joined()
        let range = try await HookServer.start { request in
            // Padding lines (count 0) as the real service adds them, and the breached hash's own line
            // in its bucket; a made-up suffix counted 0 must not refuse anything.
            var lines = (0..<5).map { String(format: "%035X", $0 * 7919) + ":0" }
            if request.path == "/range/" + hex.prefix(5) { lines.append(String(hex.dropFirst(5)) + ":37") }
            return HookServer.Answer(body: lines.joined(separator: "\r\n"))
        }
        let logs = CapturedLogs()
        let server = try await TestServer.startOpen(.sqlite, logs: logs) { $0.passwordRangeURL = "http://127.0.0.1:\(range.port)/range/" }
        try await server.withRouter { client in
            let refused = try await client.json(
                .post, "/v1/signup", ["client_id": TestServer.openClient, "email": "kim@example.com", "password": breached])
            #expect(refused.status == .unprocessableContent && Self.fieldCode(refused) == "breached_password", "\(refused.text)")
            let user = try await signUp(client, email: "kim@example.com", password: "a quiet orchard at dawn")
            let change = try await client.json(
                .put, "/v1/me/password", ["password": breached, "current_password": "a quiet orchard at dawn"], bearer: user.accessToken)
            #expect(change.status == .unprocessableContent && Self.fieldCode(change) == "breached_password", "\(change.text)")

            let asked = await range.received
            #expect(asked.count == 3)
            #expect(asked.filter { $0.path == "/range/" + hex.prefix(5) }.count == 2)
            for request in asked {
                #expect(request.path.count == "/range/".count + 5 && request.path.dropFirst(7).allSatisfy(\.isHexDigit), "\(request.path)")
                let everything = request.path + request.headers.map { "\($0.key): \($0.value)" }.joined() + request.text
                #expect(!everything.contains(hex.dropFirst(5)) && !everything.lowercased().contains(hex.dropFirst(5).lowercased()))
                #expect(!everything.contains(breached) && request.body.isEmpty)
            }

            // The service is down: sign-up goes on, a warning says so, and no line holds the password.
            await range.stop()
            let down = try await client.json(
                .post, "/v1/signup", ["client_id": TestServer.openClient, "email": "lee@example.com", "password": breached])
            #expect(down.status == .created, "\(down.text)")
            #expect(logs.all.contains { $0.hasPrefix("warning") && $0.contains("password range service") })
            #expect(!logs.all.contains { $0.contains(breached) || $0.contains(hex) })
        }
    }
}
