import Foundation
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Browser apps on a registered origin can call the API; other origins get nothing.
@Suite("CORS")
struct CORSTests {
    static let web = "https://app.example.com"

    static func headers(_ fields: [String: String]) -> HTTPFields {
        var headers: HTTPFields = [:]
        for (name, value) in fields { headers[HTTPField.Name(name)!] = value }
        return headers
    }

    @Test("Preflight and answers for a registered origin, errors included; nothing for another origin")
    func registeredOrigin() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.createClient(
            id: "spa", settings: ["email_verification=off", "allowed_origins=https://APP.example.com:443,http://localhost:3000"])
        try await server.withRouter { client in
            // Preflight for a bearer route: answered before authentication.
            let preflight = try await client.executeRequest(
                uri: "/v1/me", method: .options,
                headers: Self.headers([
                    "Origin": Self.web, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization",
                ]),
                body: nil)
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[HTTPField.Name("Access-Control-Allow-Origin")!] == Self.web)
            #expect(preflight.headers[HTTPField.Name("Access-Control-Allow-Headers")!]?.contains("Authorization") == true)
            #expect(preflight.headers[HTTPField.Name("Access-Control-Allow-Credentials")!] == nil)

            // Real answers, success and error, name the origin and vary on it.
            let jwks = try await client.json(.get, "/.well-known/jwks.json", headers: Self.headers(["Origin": Self.web]))
            #expect(jwks.status == .ok)
            #expect(jwks.headers[HTTPField.Name("Access-Control-Allow-Origin")!] == Self.web)
            #expect(jwks.headers[values: HTTPField.Name("Vary")!].contains("Origin"))
            let wrong = try await client.json(
                .post, "/v1/login", ["client_id": "spa", "email": "nobody@example.com", "password": "not it at all"],
                headers: Self.headers(["Origin": "http://localhost:3000"]))
            #expect(wrong.status == .unauthorized)
            #expect(wrong.headers[HTTPField.Name("Access-Control-Allow-Origin")!] == "http://localhost:3000")
            #expect(wrong.headers[HTTPField.Name("Access-Control-Expose-Headers")!]?.contains("Retry-After") == true)

            // Another origin: no CORS headers, and its preflight is the ordinary 405.
            for origin in ["https://evil.example.com", "https://app.example.com.evil.net", "null"] {
                let other = try await client.json(.get, "/.well-known/jwks.json", headers: Self.headers(["Origin": origin]))
                #expect(other.headers[HTTPField.Name("Access-Control-Allow-Origin")!] == nil, "\(origin)")
                let otherPreflight = try await client.executeRequest(
                    uri: "/v1/login", method: .options,
                    headers: Self.headers(["Origin": origin, "Access-Control-Request-Method": "POST"]), body: nil)
                #expect(otherPreflight.status == .methodNotAllowed, "\(origin)")
                #expect(otherPreflight.headers[HTTPField.Name("Access-Control-Allow-Origin")!] == nil)
            }
            // No Origin at all (a native app): no CORS headers.
            let native = try await client.json(.get, "/.well-known/jwks.json")
            #expect(native.headers[HTTPField.Name("Access-Control-Allow-Origin")!] == nil)
        }
    }

    @Test("allowed_origins takes exact origins only")
    func settingValidation() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        for bad in [
            "https://app.example.com/path", "ftp://files.example.com", "app.example.com", "https://a.example.com/",
            "https://u:p@a.example.com",
        ] {
            await #expect(throws: (any Error).self, "\(bad)") {
                try await server.createClient(id: "bad-\(UUID().uuidString.prefix(6))", settings: ["allowed_origins=\(bad)"])
            }
        }
        await server.stop()
    }
}
