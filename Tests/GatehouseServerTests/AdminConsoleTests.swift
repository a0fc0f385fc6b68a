import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The admin console over HTTP (its walk in a real browser is in `BrowserTests`).
@Suite("Admin console")
struct AdminConsoleTests {
    @Test(
        "AD-8: the console: a CLI link signs in once, no session is 401, forms need the session's CSRF token, strict headers on every page, actions audited as console:<name>, sign-out and expiry end the session"
    )
    func consoleSecurity() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client, email: "console-http@example.com")
            let userID = try #require(try decodeClaims(user.accessToken)["sub"] as? String)
            let access = ConsoleAccess(persistence: server.persistence, clock: server.clock)
            let link = try await access.issueLink(operatorName: "grace")
            func csrf(in page: TestResponse) -> String? {
                guard let range = page.text.range(of: #"name="csrf" value=""#) else { return nil }
                return String(page.text[range.upperBound...].prefix { $0 != "\"" })
            }
            func cookie(_ response: TestResponse, _ name: String) -> String? {
                response.headers[values: .setCookie].first { $0.hasPrefix(name + "=") }
                    .map { String($0.dropFirst(name.count + 1).prefix { $0 != ";" }) }
            }
            func form(_ path: String, _ fields: [String: String], cookies: String) async throws -> TestResponse {
                let body = fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(
                    separator: "&")
                return try await client.executeRequest(
                    uri: path, method: .post, headers: [.contentType: "application/x-www-form-urlencoded", .cookie: cookies],
                    body: ByteBuffer(string: body))
            }

            let anonymous = try await client.json(.get, "/admin/console")
            #expect(anonymous.status == .unauthorized && anonymous.text.contains("gatehouse console link"))
            #expect(try await client.json(.get, "/admin/console/users", bearer: user.accessToken).status == .unauthorized)

            let enterPage = try await client.json(.get, "/admin/console/enter?token=\(link)")
            #expect(enterPage.status == .ok)
            let nonce = try #require(cookie(enterPage, "gh_console_enter"))
            let enterCSRF = try #require(csrf(in: enterPage))
            #expect(try await form("/admin/console/enter", ["token": link], cookies: "gh_console_enter=\(nonce)").status == .forbidden)
            let entered = try await form("/admin/console/enter", ["token": link, "csrf": enterCSRF], cookies: "gh_console_enter=\(nonce)")
            #expect(entered.status == .seeOther && entered.headers[.location] == "/admin/console")
            let sessionCookie = try #require(entered.headers[values: .setCookie].first { $0.hasPrefix("gh_console=") })
            #expect(
                sessionCookie.contains("HttpOnly") && sessionCookie.contains("SameSite=Strict")
                    && sessionCookie.contains("Path=/admin/console"))
            let session = try #require(cookie(entered, "gh_console"))
            let replay = try await form("/admin/console/enter", ["token": link, "csrf": enterCSRF], cookies: "gh_console_enter=\(nonce)")
            #expect(replay.status == .unauthorized, "a spent link opens nothing")

            let overview = try await client.executeRequest(
                uri: "/admin/console", method: .get, headers: [.cookie: "gh_console=\(session)"], body: nil)
            #expect(overview.status == .ok && overview.text.contains("grace"))
            #expect(overview.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(overview.headers[HTTPField.Name("X-Frame-Options")!] == "DENY" && overview.headers[.cacheControl] == "no-store")
            let formToken = try #require(csrf(in: overview))

            server.clock.advance(by: 1)  // events of one millisecond are ordered by id
            let forged = try await form("/admin/console/users/\(userID)/disable", [:], cookies: "gh_console=\(session)")
            #expect(forged.status == .forbidden)
            let wrong = try await form(
                "/admin/console/users/\(userID)/disable", ["csrf": "x" + formToken], cookies: "gh_console=\(session)")
            #expect(wrong.status == .forbidden)
            #expect(try await server.persistence.read { try await $0.users.find(id: UUID(uuidString: userID)!) }?.state == .active)
            let disabled = try await form("/admin/console/users/\(userID)/disable", ["csrf": formToken], cookies: "gh_console=\(session)")
            #expect(disabled.status == .seeOther)
            #expect(try await server.persistence.read { try await $0.users.find(id: UUID(uuidString: userID)!) }?.state == .disabled)
            let noConfirm = try await form("/admin/console/users/\(userID)/delete", ["csrf": formToken], cookies: "gh_console=\(session)")
            #expect(noConfirm.status == .badRequest)
            let events = try await AuditLog(persistence: server.persistence).list(AuditQuery(limit: 100)).filter {
                $0.actor == "console:grace"
            }
            #expect(events.map(\.type) == ["admin.console.signed_in", "admin.user.disabled"])

            let out = try await form("/admin/console/sign-out", ["csrf": formToken], cookies: "gh_console=\(session)")
            #expect(out.status == .ok && cookie(out, "gh_console") == "")
            let after = try await client.executeRequest(
                uri: "/admin/console", method: .get, headers: [.cookie: "gh_console=\(session)"], body: nil)
            #expect(after.status == .unauthorized)

            // A second link's session ends by itself after eight hours.
            let second = try await access.enter(linkToken: try await access.issueLink(operatorName: "grace"), meta: RequestMeta())
            let live = try await client.executeRequest(
                uri: "/admin/console/keys", method: .get, headers: [.cookie: "gh_console=\(second.token)"], body: nil)
            #expect(live.status == .ok && live.text.contains("current"))
            server.clock.advance(by: ConsoleAccess.sessionLifetime + 1)
            let expired = try await client.executeRequest(
                uri: "/admin/console/keys", method: .get, headers: [.cookie: "gh_console=\(second.token)"], body: nil)
            #expect(expired.status == .unauthorized)
            #expect(try await client.json(.get, "/admin/console/enter?token=nonsense").status == .badRequest)
        }
    }
}
