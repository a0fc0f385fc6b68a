import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The admin surface is rate-limited like the sign-in.
@Suite("Admin rate limits")
struct AdminRateLimitTests {
    @Test(
        "AD-11: with admin=3/60, an admin credential's fourth request in a minute is 429 with Retry-After and RateLimit headers while another credential's go on, and the minute over it works again; the console's sign-in link is refused with 429 and Retry-After after three tries from one address"
    )
    func adminLimits() async throws {
        let server = try await TestServer.startOpen(.sqlite) { try? $0.rateLimits.apply("admin=3/60") }
        try await server.withRouter { client in
            let ops = try await adminToken(server, client, id: "ops", scopes: ["admin:read"])
            let other = try await adminToken(server, client, id: "other-ops", scopes: ["admin:read"])
            for _ in 0..<3 {
                let answer = try await client.json(.get, "/admin/v1/clients", bearer: ops)
                #expect(answer.status == .ok && answer.headers[HTTPField.Name("RateLimit")!] != nil, "\(answer.headers)")
            }
            let refused = try await client.json(.get, "/admin/v1/clients", bearer: ops)
            #expect(refused.status == .tooManyRequests, "\(refused.status) \(refused.text)")
            let wait = try #require(refused.headers[.retryAfter].flatMap(Int.init))
            #expect(wait > 0 && wait <= 60 && refused.headers[HTTPField.Name("RateLimit-Policy")!] != nil)
            #expect(try await client.json(.get, "/admin/v1/clients", bearer: other).status == .ok)
            server.clock.advance(by: 61)
            #expect(try await client.json(.get, "/admin/v1/clients", bearer: ops).status == .ok)

            // The console's sign-in link: CSRF-checked tries with an unknown link, then 429.
            let link = try await ConsoleAccess(persistence: server.persistence, clock: server.clock).issueLink(operatorName: "grace")
            let page = try await client.json(.get, "/admin/console/enter?token=\(link)")
            let nonce = try #require(
                page.headers[values: .setCookie].first { $0.hasPrefix("gh_console_enter=") }
                    .map { String($0.dropFirst("gh_console_enter=".count).prefix { $0 != ";" }) })
            let range = try #require(page.text.range(of: #"name="csrf" value=""#))
            let csrf = String(page.text[range.upperBound...].prefix { $0 != "\"" })
            var statuses: [HTTPResponse.Status] = []
            var last: TestResponse?
            for _ in 0..<4 {
                let body = "token=gh_cl_unknown&csrf=" + (csrf.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                let answer = try await client.executeRequest(
                    uri: "/admin/console/enter", method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "gh_console_enter=\(nonce)"],
                    body: ByteBuffer(string: body))
                statuses.append(answer.status)
                last = answer
            }
            #expect(statuses.prefix(3).allSatisfy { $0 == .unauthorized } && statuses.last == .tooManyRequests, "\(statuses)")
            #expect(last?.headers[.retryAfter] != nil)
        }
    }
}
