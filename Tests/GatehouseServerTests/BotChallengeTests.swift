import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@Suite("Bot challenge")
struct BotChallengeTests {
    static let header = HTTPField.Name("Gatehouse-Bot-Challenge")!

    @Test(
        "BOT-1: with bot_challenge=on, sign-up, password sign-in, a code send, a verification resend and recovery are refused without a token (400), with one the siteverify stand-in refuses (403) and with a replayed one (403, the service not asked again), and served with a fresh one; the service gets the secret, the token and the caller's address; bot_challenge=signup asks only at sign-up; a service that is down is 503 with Retry-After"
    )
    func apiRequests() async throws {
        let siteverify = try await SiteverifyStandIn.start()
        let server = try await TestServer.startOpen(.sqlite) { $0.botChallenge = SiteverifyStandIn.service(siteverify) }
        _ = try await server.createClient(
            id: "guarded", settings: ["email_verification=off", "bot_challenge=on", "methods=password,email_otp"])
        _ = try await server.createClient(id: "signup-only", settings: ["email_verification=off", "bot_challenge=signup"])
        // Over a socket, so the caller has an address the service is told of.
        try await server.withLive { client in
            func post(_ path: String, _ body: [String: Any], token: String?) async throws -> TestResponse {
                var headers: HTTPFields = [.contentType: "application/json"]
                if let token { headers[Self.header] = token }
                let data = try JSONSerialization.data(withJSONObject: body)
                return try await client.executeRequest(
                    uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: Array(data)))
            }
            let account = ["client_id": "guarded", "email": "robin@example.com", "password": "a quiet orchard at dawn"]
            let requests: [(String, [String: Any])] = [
                ("/v1/signup", account), ("/v1/login", account), ("/v1/otp", ["client_id": "guarded", "email": "robin@example.com"]),
                ("/v1/verification", ["client_id": "guarded", "email": "robin@example.com"]),
                ("/v1/recovery", ["client_id": "guarded", "email": "robin@example.com"]),
            ]
            for (index, (path, body)) in requests.enumerated() {
                let missing = try await post(path, body, token: nil)
                #expect(missing.status == .badRequest && missing.string("code") == "bot_challenge_required", "\(path): \(missing.text)")
                let wrong = try await post(path, body, token: "bad-\(index)")
                #expect(wrong.status == .forbidden && wrong.string("code") == "bot_challenge_failed", "\(path): \(wrong.text)")
                let good = try await post(path, body, token: "good-\(index)")
                #expect((200..<300).contains(Int(good.status.code)), "\(path): \(good.text)")
                let replayed = try await post(path, body, token: "good-\(index)")
                #expect(replayed.status == .forbidden && replayed.string("code") == "bot_challenge_failed", "\(path): \(replayed.text)")
            }
            let asked = await siteverify.requests(to: "/siteverify")
            // Each path: the wrong token and the good one; a replay is refused before the service is asked.
            #expect(asked.count == 2 * requests.count)
            let first = SiteverifyStandIn.form(try #require(asked.first).text)
            #expect(first["secret"] == SiteverifyStandIn.secret && first["response"] == "bad-0" && first["remoteip"] == "127.0.0.1")
            #expect(Set(asked.map { SiteverifyStandIn.form($0.text)["response"] ?? "" }).count == asked.count)

            // Asked at sign-up only.
            let other = ["client_id": "signup-only", "email": "ash@example.com", "password": "a quiet orchard at dawn"]
            #expect(try await post("/v1/signup", other, token: nil).status == .badRequest)
            #expect(try await post("/v1/signup", other, token: "good-signup-only").status == .created)
            #expect(try await post("/v1/login", other, token: nil).status == .ok)
            // Not asked at all.
            _ = try await signUp(client)

            await siteverify.stop()
            let down = try await post(
                "/v1/signup", ["client_id": "guarded", "email": "lee@example.com", "password": "a quiet orchard at dawn"],
                token: "good-down")
            #expect(down.status == .serviceUnavailable && down.headers[.retryAfter] != nil, "\(down.text)")
        }
    }

    @Test(
        "BOT-2: the hosted sign-in, sign-up and recovery pages of a client with bot_challenge=on carry the Turnstile widget with the site key in each form that needs it, under a policy that allows Cloudflare's origin for scripts, frames and calls and no other; the widget's field is the token: a sign-in without it is shown again with the error, a replayed one too, a fresh one signs in; a client without the setting gets neither widget nor origin"
    )
    func hostedPages() async throws {
        let siteverify = try await SiteverifyStandIn.start()
        let (server, _) = try await Hosted.start(["bot_challenge=on", "methods=password,email_otp"]) {
            $0.botChallenge = SiteverifyStandIn.service(siteverify)
        }
        _ = try await server.createClient(id: "plain", settings: ["email_verification=off"])
        try await server.withRouter { client in
            _ = try await signUp(client, email: "page@example.com", password: "a quiet orchard at dawn", clientID: "plain")
            let jar = HostedJar(client)
            let page = try await jar.open(Hosted.request(challenge: pkcePair().challenge))
            let widget = "<div class=\"cf-turnstile\" data-sitekey=\"\(SiteverifyStandIn.siteKey)\"></div>"
            #expect(page.text.components(separatedBy: widget).count == 3, "the password and the code forms: \(page.text)")
            #expect(page.text.contains("<script src=\"https://challenges.cloudflare.com/turnstile/v0/api.js\" async defer></script>"))
            let policy = try #require(page.headers[.contentSecurityPolicy])
            for directive in ["script-src", "frame-src", "connect-src"] {
                let sources = policy.split(separator: ";").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(directive) }
                #expect(sources?.contains("https://challenges.cloudflare.com") == true, "\(directive): \(policy)")
            }
            #expect(!policy.contains("hcaptcha") && !policy.contains("google"))
            let signupPage = try await jar.open(try #require(HostedJar.attribute(page.text, after: "id=\"signup-link\" href=\"")))
            #expect(signupPage.text.contains(widget))
            let recoveryPage = try await jar.open(try #require(HostedJar.attribute(page.text, after: "id=\"recovery-link\" href=\"")))
            #expect(recoveryPage.text.contains(widget))

            let action = try #require(HostedJar.action(page, form: "signin"))
            let account = [("email", "page@example.com"), ("password", "a quiet orchard at dawn")]
            let without = try await jar.submit(action, account, csrf: HostedJar.csrf(page))
            #expect(without.status == .forbidden && without.text.contains("not a robot"), "\(without.text)")
            let signedIn = try await jar.submit(action, account + [("cf-turnstile-response", "good-page")], csrf: HostedJar.csrf(page))
            #expect(signedIn.status == .seeOther && HostedJar.query(signedIn)["code"] != nil, "\(signedIn.text)")
            let other = HostedJar(client)
            let again = try await other.open(Hosted.request(challenge: pkcePair().challenge))
            let replayed = try await other.submit(
                try #require(HostedJar.action(again, form: "signin")), account + [("cf-turnstile-response", "good-page")],
                csrf: HostedJar.csrf(again))
            #expect(replayed.status == .forbidden && replayed.text.contains("not a robot"), "\(replayed.text)")

            // The confidential partner client does not ask.
            let partner = try await HostedJar(client).open(
                Hosted.request("partner", redirect: Hosted.partnerRedirect, challenge: nil))
            #expect(!partner.text.contains("cf-turnstile"))
            #expect(partner.headers[.contentSecurityPolicy]?.contains("cloudflare") == false)
        }
        await siteverify.stop()
    }
}
