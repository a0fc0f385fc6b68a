import Foundation
import Gatehouse
import Testing

@Suite("One sign-in result (scripted server)")
struct SignInResultTests {
    static let redirect = URL(string: "com.example.app:/signed-in")!

    static func client(_ server: ScriptedServer) -> AuthClient {
        AuthClient(
            configuration: .init(
                baseURL: Fixture.baseURL, clientID: "app", redirectURL: redirect, store: InMemorySessionStore(), transport: server))
    }

    /// The redirect a browser comes back with after `start`, carrying the server's `code`.
    static func returning(from start: URL, code: String, issuer: String? = nil) throws -> URL {
        let state = try #require(URLComponents(url: start, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
        var back = URLComponents(url: redirect, resolvingAgainstBaseURL: false)!
        back.queryItems =
            [URLQueryItem(name: "code", value: code), URLQueryItem(name: "state", value: state)]
            + (issuer.map { [URLQueryItem(name: "iss", value: $0)] } ?? [])
        return back.url!
    }

    @Test("U-30: every sign-in answers a SignInResult whose isNew is the server's is_new and whose session is the one just stored")
    func everyPath() async throws {
        let server = ScriptedServer()
        let client = Self.client(server)
        func check(_ result: SignInResult, isNew: Bool, token: Int, _ comment: Comment) {
            #expect(result.isNew == isNew, comment)
            #expect(result.user == Fixture.user && result.session.user == Fixture.user, comment)
            #expect(result.session.accessToken == "access-\(token)" && result.session == client.session, comment)
        }

        await server.on("POST /v1/login", Fixture.tokens(1, isNew: false))
        check(try await client.signIn(email: "ada@example.com", password: "pw"), isNew: false, token: 1, "password")
        await server.on("POST /v1/otp/verify", Fixture.tokens(2, isNew: true))
        check(try await client.signIn(code: "123456", for: .phone("+4790012345")), isNew: true, token: 2, "one-time code")
        await server.on("POST /v1/verify", Fixture.tokens(3, isNew: true))
        check(try await client.signIn(email: "ada@example.com", verificationCode: "654321"), isNew: true, token: 3, "verification code")
        await server.on("POST /v1/recovery/verify", Fixture.tokens(4, isNew: false))
        check(try await client.signIn(email: "ada@example.com", recoveryCode: "111222"), isNew: false, token: 4, "recovery code")
        await server.on("POST /v1/social/github/token", Fixture.tokens(5, isNew: true))
        check(try await client.signIn(with: .github(accessToken: "gho_x")), isNew: true, token: 5, "native social")
        await server.on("POST /oauth/token", Fixture.tokens(6, isNew: true))
        check(try await client.signIn(authorizationCode: "ac-6"), isNew: true, token: 6, "authorization code")

        // The web sign-ins: a provider's, then the hosted page's, which may create the account too.
        let social = try await client.socialSignInURL(provider: "x")
        await server.on("POST /oauth/token", Fixture.tokens(7, isNew: false))
        check(
            try await client.signIn(fromSocialRedirect: try Self.returning(from: social, code: "ac-7")), isNew: false, token: 7,
            "social web")
        let hosted = try await client.browserSignInURL()
        await server.on("POST /oauth/token", Fixture.tokens(8, isNew: true))
        let back = try Self.returning(from: hosted, code: "ac-8", issuer: Fixture.baseURL.absoluteString)
        check(try await client.signIn(fromBrowserRedirect: back), isNew: true, token: 8, "hosted page")
        #expect(await server.calls(to: "POST /oauth/token").last?.form["code"] == "ac-8")
    }

    @Test("U-31: signIn(withFields:) answers the user its extra fields updated, in the result and in its session")
    func fieldsUpdateTheResult() async throws {
        let server = ScriptedServer()
        var updated = Fixture.user
        updated.profile.metadata = ["plan": .string("pro")]
        await server.on("POST /v1/login", Fixture.tokens(1, isNew: false))
        await server.on("PATCH /v1/me", .json(200, updated))
        let client = Fixture.client(server)
        let result = try await client.signIn(withFields: ["email": "ada@example.com", "password": "pw", "plan": "pro"])
        #expect(result.user == updated && result.session.user == updated && !result.isNew)
        #expect(result.session == client.session)
    }
}
