import Foundation
import GatehouseAPI
import GatehouseCore
@testable import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The HTTP edge on its own: stacked authenticators and error renderers chosen by route group. The
/// routes here live under made-up paths, so nothing can pick a behaviour from the URL.
@Suite("HTTP edge: authenticators and renderers")
struct EdgeTests {
    /// Which identity the stacked authenticators settled on.
    static func describe(_ identity: Identity?) -> String {
        switch identity {
        case .user(let principal): "user \(principal.user.email ?? "")"
        case .admin(let admin): "admin \(admin.clientID)"
        case .browser(let browser): "browser \(browser.user.email ?? "")"
        case nil: "anonymous"
        }
    }

    static func router(for server: TestServer) -> Router<AppRequestContext> {
        let services = server.services
        let router = Router(context: AppRequestContext.self)
        router.add(middleware: EdgeMiddleware(trustForwardedFor: false, cors: CORSPolicy(origins: services.allowedOrigins)))
        router.group("/edge/whoami")
            .add(middleware: ErrorMiddleware(renderer: ProblemRenderer()))
            .add(
                middleware: AuthenticationMiddleware(authenticators: [
                    BrowserSessionAuthenticator(sessions: services.browserSessions),
                    AdminCredentialAuthenticator(admin: AdminAuthenticator(services: services)),
                    BearerTokenAuthenticator(bearer: BearerAuthenticator(services: services)),
                ])
            )
            .get { _, context in describe(context.identity) }

        // One error, three groups, three shapes.
        let refusal = GatehouseError.invalidGrant("The code is spent.")
        router.group("/edge/a").add(middleware: ErrorMiddleware(renderer: ProblemRenderer()))
            .get { _, _ -> String in throw refusal }
        router.group("/edge/b").add(middleware: ErrorMiddleware(renderer: OAuthErrorRenderer()))
            .get { _, _ -> String in throw refusal }
        router.group("/edge/c").add(middleware: ErrorMiddleware(renderer: PageErrorRenderer(catalog: server.server.templates)))
            .get { _, _ -> String in throw refusal }
        return router
    }

    @Test("Authenticators stack: each answers only for its own credential, the first that recognises the caller wins")
    func stackedAuthenticators() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let admin = try await server.createClient(id: "ops", kind: .confidential, settings: [])
        _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock).update(
            id: "ops", settings: [], scopes: ["admin:read"])
        let browserUser = UserRecord(email: "browser@example.com", createdAt: server.clock.now())
        try await server.persistence.transaction { try await $0.users.insert(browserUser) }
        let defaultClient = try await server.services.clients.resolve(nil)
        let starter = server.services.starter
        let cookie = try #require(
            try await server.persistence.transaction { stores in
                try await starter.start(
                    Authentication(userID: browserUser.id, amr: ["pwd"]), client: defaultClient, target: .browser(.init()),
                    meta: RequestMeta(ipAddress: "192.0.2.1"), stores: stores)
            }.get().browser().cookie)
        let app = Application(router: Self.router(for: server))
        try await server.server.makeApplication(maintenance: false).test(.router) { client in
            let user = try await signUp(client, email: "bearer@example.com")
            let token = try await client.form(
                "/oauth/token", ["grant_type": "client_credentials", "scope": "admin:read"],
                basic: ("ops", try #require(admin.secret)))
            #expect(token.status == .ok, "\(token.text)")
            let adminToken = try #require(token.string("access_token"))

            try await app.test(.router) { edge in
                func whoami(_ headers: HTTPFields) async throws -> TestResponse {
                    try await edge.executeRequest(uri: "/edge/whoami", method: .get, headers: headers, body: nil)
                }
                #expect(try await whoami([:]).text == "anonymous")
                #expect(try await whoami([.authorization: "Bearer \(user.accessToken)"]).text == "user bearer@example.com")
                #expect(try await whoami([.authorization: "Bearer \(adminToken)"]).text == "admin ops")
                #expect(try await whoami([.cookie: "gh_session=\(cookie)"]).text == "browser browser@example.com")
                // A cookie nobody issued is "not mine": the bearer behind it still counts.
                let passedOn = try await whoami([.cookie: "gh_session=gh_bs_forged", .authorization: "Bearer \(user.accessToken)"])
                #expect(passedOn.text == "user bearer@example.com")
                // Another scheme is "not mine" too; a bearer token that fails its check is "mine, refused".
                #expect(try await whoami([.authorization: "Basic b3BzOng="]).text == "anonymous")
                let forged = try await whoami([.authorization: "Bearer eyJhbGciOiJFUzI1NiJ9.e30.AAAA"])
                #expect(forged.status == .unauthorized && forged.headers[.contentType] == "application/problem+json")
                #expect(forged.string("code") == "invalid_token", "\(forged.text)")
            }
        }
        await server.stop()
    }

    @Test("The same core error renders as problem JSON, OAuth JSON or a page, by the group it was thrown in")
    func renderersByGroup() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let app = Application(router: Self.router(for: server))
        try await app.test(.router) { edge in
            let problem = try await edge.executeRequest(uri: "/edge/a", method: .get, headers: [:], body: nil)
            #expect(problem.status == .badRequest && problem.headers[.contentType] == "application/problem+json")
            #expect(problem.string("code") == "invalid_grant" && problem.object["status"] as? Int == 400)

            let oauth = try await edge.executeRequest(uri: "/edge/b", method: .get, headers: [:], body: nil)
            #expect(oauth.status == .badRequest && oauth.headers[.contentType] == "application/json")
            #expect(oauth.string("error") == "invalid_grant" && oauth.string("error_description") == "The code is spent.")
            #expect(oauth.headers[.cacheControl] == "no-store")

            let page = try await edge.executeRequest(uri: "/edge/c", method: .get, headers: [.acceptLanguage: "nb"], body: nil)
            #expect(page.status == .badRequest && page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(page.text.contains("<html") && !page.text.contains("invalid_grant"))

        }
        await server.stop()
    }
    @Test("Every answer of the real server carries nosniff and a Request-Id, once: successes, each renderer's errors, unknown routes")
    func commonHeaders() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let answers = [
                try await client.executeRequest(
                    uri: "/v1/client?client_id=\(TestServer.openClient)", method: .get, headers: [:], body: nil),
                try await client.json(.post, "/v1/login", ["client_id": TestServer.openClient, "email": "x@example.com", "password": "p"]),
                try await client.form("/oauth/token", ["grant_type": "nonsense"]),
                try await client.executeRequest(uri: "/reset?token=gh_l_unknown", method: .get, headers: [:], body: nil),
                try await client.executeRequest(uri: "/no/such/route", method: .get, headers: [:], body: nil),
            ]
            #expect(answers[0].status == .ok && answers[1].status == .unauthorized && answers[2].status == .badRequest)
            #expect(answers[3].headers[.contentType]?.hasPrefix("text/html") == true && answers[4].status == .notFound)
            var ids = Set<String>()
            for answer in answers {
                #expect(answer.headers[values: .xContentTypeOptions] == ["nosniff"], "\(answer.status)")
                let id = answer.headers[values: HTTPField.Name("Request-Id")!]
                #expect(id.count == 1 && !(id.first ?? "").isEmpty, "\(answer.status)")
                ids.formUnion(id)
            }
            #expect(ids.count == answers.count)
            #expect(answers[4].headers[.contentType] == "application/problem+json")
        }
    }
    @Test("A user's own data is never cacheable: /v1/me and everything under it answers no-store")
    func meIsNoStore() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            for (method, path) in [
                ("GET", "/v1/me"), ("PATCH", "/v1/me"), ("GET", "/v1/me/sessions"),
                ("GET", "/v1/me/agreements"), ("GET", "/v1/me/required-fields"),
            ] {
                let answer =
                    method == "PATCH"
                    ? try await client.json(.patch, path, ["profile": ["given_name": "Ada"]], bearer: user.accessToken)
                    : try await client.json(.get, path, bearer: user.accessToken)
                #expect(answer.status == .ok, "\(path): \(answer.text)")
                #expect(answer.headers[.cacheControl] == "no-store", "\(method) \(path)")
            }
        }
    }
    @Test("A known path with a wrong method is 405 with Allow, on every group; an unknown path stays 404")
    func wrongMethods() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.get, "/v1/login", "POST"), (.delete, "/v1/me", "GET, HEAD, PATCH"),
                (.get, "/oauth/token", "POST"), (.put, "/reset", "GET, HEAD, POST"),
                (.post, "/v1/me/sessions/\(UUID().uuidString)", "DELETE"), (.options, "/.well-known/jwks.json", "GET, HEAD"),
                (HTTPRequest.Method("TRACE")!, "/v1/login", "POST"), (HTTPRequest.Method("PROPFIND")!, "/health/live", "GET, HEAD"),
                (HTTPRequest.Method("QUERY")!, "/verify", "GET, HEAD, POST"), (.head, "/v1/login", "POST"),
            ]
            for (method, path, allowed) in cases {
                let answer = try await client.executeRequest(uri: path, method: method, headers: [:], body: nil)
                #expect(answer.status == .methodNotAllowed, "\(method) \(path): \(answer.status)")
                #expect(answer.string("code") == "method_not_allowed", "\(method) \(path): \(answer.text)")
                let allow = Set((answer.headers[.allow] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                let expected = Set(allowed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(allow == expected, "\(method) \(path): \(answer.headers[.allow] ?? "none")")
            }
            #expect(try await client.executeRequest(uri: "/v1/nothing-here", method: .get, headers: [:], body: nil).status == .notFound)
            // HEAD is GET without the body, as Allow promises.
            let head = try await client.executeRequest(uri: "/health/ready", method: .head, headers: [:], body: nil)
            #expect(head.status == .ok && head.body.readableBytes == 0)
            // The right method still reaches the route.
            #expect(try await client.executeRequest(uri: "/.well-known/jwks.json", method: .get, headers: [:], body: nil).status == .ok)
        }
    }
}
