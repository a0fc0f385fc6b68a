import Foundation
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@Suite("Password recovery")
struct RecoveryTests {
    @Test(
        "Recovery by code: 202 for anyone, amr recovery, a new password without the old one, others signed out",
        arguments: TestDatabase.available)
    func recoverByCode(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let email = user.email.lowercased()
            let unknown = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": "nobody@example.com"])
            let known = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email])
            #expect(unknown.status == .accepted && known.status == .accepted)
            #expect(unknown.text == known.text)
            try await server.deliverMail()
            #expect(server.mail.messages.filter { $0.recipient == "nobody@example.com" }.isEmpty)
            let mail = try #require(server.lastMail(to: email, kind: "recovery"))
            let code = try #require(mail.code)
            #expect(mail.link("/reset?token=") != nil)

            let verified = try await client.json(
                .post, "/v1/recovery/verify", ["client_id": TestServer.openClient, "email": email, "code": code])
            #expect(verified.status == .ok, "\(verified.text)")
            let access = try #require(verified.string("access_token"))
            #expect(try decodeClaims(access)["amr"] as? [String] == ["recovery"])

            let change = try await client.json(.put, "/v1/me/password", ["password": "recovered secret"], bearer: access)
            #expect(change.status == .noContent)
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .unauthorized)
            _ = try await logIn(client, email: email, password: "recovered secret")
            try await server.deliverMail()
            #expect(server.lastMail(to: email, kind: "password_changed") != nil)
        }
    }

    @Test("The recovery window closes after ten minutes; the neutral notice to unknown addresses is opt-in")
    func recoveryWindowAndNotice() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.createClient(id: "noticing", settings: ["recovery_unknown_notice=on"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            // A proved address: recovery keeps its password (an unproved one would lose it).
            try await server.persistence.transaction { stores in
                guard var record = try await stores.users.find(email: user.email.lowercased()) else { return }
                record.emailVerified = true
                try await stores.users.update(record)
            }
            _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email])
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: user.email.lowercased(), kind: "recovery")?.code)
            let verified = try await client.json(
                .post, "/v1/recovery/verify", ["client_id": TestServer.openClient, "email": user.email, "code": code])
            let access = try #require(verified.string("access_token"))
            server.clock.advance(by: 11 * 60)
            let late = try await client.json(.put, "/v1/me/password", ["password": "too late now"], bearer: access)
            #expect(late.status == .unprocessableContent)
            #expect((late.object["errors"] as? [[String: Any]])?.first?["field"] as? String == "current_password")

            _ = try await client.json(.post, "/v1/recovery", ["client_id": "noticing", "email": "stranger@example.com"])
            try await server.deliverMail()
            #expect(server.lastMail(to: "stranger@example.com", kind: "recovery_unknown") != nil)
        }
    }

    @Test("The hosted reset page needs its CSRF cookie, checks the policy, and sets the password once")
    func resetPage() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": user.email])
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: user.email.lowercased(), kind: "recovery")?.linkPath("/reset?token="))
            let token = try #require(URLComponents(string: path)?.queryItems?.first { $0.name == "token" }?.value)

            let form = try await client.json(.get, path)
            #expect(form.status == .ok)
            #expect(form.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            let cookie = try #require(form.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            let nonce = String(cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1)[1])
            let csrf = try #require(Self.hidden("csrf", in: form.text))

            func post(_ fields: [String: String], cookie: String?) async throws -> TestResponse {
                var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
                if let cookie { headers[.cookie] = cookie }
                let body = fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }.joined(
                    separator: "&")
                return try await client.executeRequest(uri: "/reset", method: .post, headers: headers, body: .init(string: body))
            }
            let forged = try await post(
                ["token": token, "csrf": csrf, "password": "brand new pass", "confirm": "brand new pass"], cookie: nil)
            #expect(forged.status == .forbidden)
            let mismatch = try await post(
                ["token": token, "csrf": csrf, "password": "brand new pass", "confirm": "other"], cookie: "gh_csrf=\(nonce)")
            #expect(mismatch.status == .unprocessableContent)
            let weak = try await post(["token": token, "csrf": csrf, "password": "short", "confirm": "short"], cookie: "gh_csrf=\(nonce)")
            #expect(weak.status == .unprocessableContent)
            let done = try await post(
                ["token": token, "csrf": csrf, "password": "brand new pass", "confirm": "brand new pass"], cookie: "gh_csrf=\(nonce)")
            #expect(done.status == .ok, "\(done.text)")
            #expect(try await client.json(.get, "/v1/me", bearer: user.accessToken).status == .unauthorized)
            _ = try await logIn(client, email: user.email, password: "brand new pass")
            let replay = try await post(
                ["token": token, "csrf": csrf, "password": "another new one", "confirm": "another new one"], cookie: "gh_csrf=\(nonce)")
            #expect(replay.status == .gone)
        }
    }

    static func hidden(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }
}
