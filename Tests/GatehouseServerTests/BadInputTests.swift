import Foundation
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Every kind of broken body gets a 4xx problem document: never a 5xx, never a crash.
@Suite("Bad input")
struct BadInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var body: [UInt8]
        var contentType: String?
        var status: Int
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "malformed JSON", body: Array(#"{"email": "a@b.co", "password": "#.utf8), contentType: "application/json", status: 400),
        Case(label: "not an object", body: Array("[1,2,3]".utf8), contentType: "application/json", status: 422),
        Case(label: "empty body", body: [], contentType: "application/json", status: 400),
        Case(label: "wrong types", body: Array(#"{"email": 42, "password": true}"#.utf8), contentType: "application/json", status: 422),
        Case(label: "missing fields", body: Array(#"{"email": "a@b.co"}"#.utf8), contentType: "application/json", status: 422),
        Case(label: "null field", body: Array(#"{"email": null, "password": "x"}"#.utf8), contentType: "application/json", status: 422),
        Case(
            label: "invalid UTF-8",
            body: Array(#"{"email": ""#.utf8) + [0xff, 0xfe] + Array(#"", "password": "correct horse battery"}"#.utf8),
            contentType: "application/json", status: 400),
        Case(
            label: "wrong content type", body: Array(#"{"email": "a@b.co", "password": "x"}"#.utf8), contentType: "text/plain", status: 415),
        Case(label: "no content type", body: Array(#"{"email": "a@b.co", "password": "x"}"#.utf8), contentType: nil, status: 415),
        Case(
            label: "over 1 MiB",
            body: Array(#"{"email": ""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: 1 << 20) + Array(#""}"#.utf8),
            contentType: "application/json", status: 413),
        Case(
            label: "deeply nested", body: Array((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8),
            contentType: "application/json", status: 400),
    ]

    @Test("JSON routes answer 4xx problem documents", arguments: cases)
    func jsonRoutes(testCase: Case) async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let user = try await signUp(client)
            for (method, path, bearer) in [
                (HTTPRequest.Method.post, "/v1/signup", nil), (.post, "/v1/login", nil),
                (.patch, "/v1/me", user.accessToken), (.put, "/v1/me/password", user.accessToken),
            ] as [(HTTPRequest.Method, String, String?)] {
                let response = try await client.raw(method, path, body: testCase.body, contentType: testCase.contentType, bearer: bearer)
                let code = Int(response.status.code)
                // A body that decodes to the wrong shape may be a 400 or a 422, depending on where the parser stops.
                #expect((400..<500).contains(code), "\(path): \(code)")
                if testCase.status != 422 && testCase.status != 400 {
                    #expect(code == testCase.status, "\(path): \(code) \(response.text)")
                }
                #expect(response.headers[.contentType] == "application/problem+json", "\(path)")
                #expect(response.object["code"] is String, "\(path): \(response.text)")
            }
        }
    }

    @Test("OAuth routes answer RFC 6749 errors for broken forms")
    func oauthRoutes() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            for path in ["/oauth/token", "/oauth/revoke", "/oauth/introspect"] {
                let json = try await client.raw(.post, path, body: Array(#"{"a":1}"#.utf8), contentType: "application/json")
                #expect(json.status.code == 415, "\(path)")
                #expect(json.string("error") == "invalid_request")
                let badUTF8 = try await client.raw(
                    .post, path, body: Array("token=".utf8) + [0xff, 0xfe], contentType: "application/x-www-form-urlencoded")
                #expect((400..<500).contains(Int(badUTF8.status.code)), "\(path) \(badUTF8.status)")
                let badPercent = try await client.raw(
                    .post, path, body: Array("token=%zz&grant_type=%".utf8), contentType: "application/x-www-form-urlencoded")
                #expect((400..<500).contains(Int(badPercent.status.code)), "\(path) \(badPercent.status)")
                let huge = try await client.raw(
                    .post, path, body: Array(repeating: UInt8(ascii: "a"), count: (1 << 20) + 10),
                    contentType: "application/x-www-form-urlencoded")
                #expect(huge.status.code == 413, "\(path)")
            }
            let noGrant = try await client.form("/oauth/token", [:])
            #expect(noGrant.status == .badRequest && noGrant.string("error") == "invalid_request")
            let badGrant = try await client.form("/oauth/token", ["grant_type": "password"])
            #expect(badGrant.string("error") == "unsupported_grant_type")
            let repeated = try await client.raw(
                .post, "/oauth/token", body: Array("grant_type=refresh_token&grant_type=refresh_token".utf8),
                contentType: "application/x-www-form-urlencoded")
            #expect(repeated.string("error") == "invalid_request")
        }
    }

    @Test("Unknown routes and methods are problem documents too")
    func unknownRoutes() async throws {
        let server = try await TestServer.start(.sqlite)
        try await server.withRouter { client in
            let missing = try await client.json(.get, "/v1/nothing-here")
            #expect(missing.status == .notFound)
            #expect(missing.headers[.contentType] == "application/problem+json")
            let noAuth = try await client.json(.get, "/v1/me")
            #expect(noAuth.status == .unauthorized)
            #expect(noAuth.string("code") == "unauthorized")
            let badScheme = try await client.json(.get, "/v1/me", headers: [.authorization: "Basic Zm9vOmJhcg=="])
            #expect(badScheme.status == .unauthorized)
        }
    }
}

@Suite("Nulls in typed fields")
struct NullFieldTests {
    @Test(
        "A null for a typed field is a 422 naming it; nulls inside metadata are data; documented nullable fields pass; a null in a field the request does not know is ignored like any unknown field"
    )
    func nulls() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.createClient(id: "terms", settings: ["email_verification=off", "terms_platform_version=1"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            let cases: [(HTTPRequest.Method, String, [String: any Sendable], String)] = [
                (.patch, "/v1/me", ["profile": ["metadata": NSNull()]], "profile.metadata"),
                (.patch, "/v1/me", ["profile": ["given_name": NSNull()]], "profile.given_name"),
                (.post, "/v1/logout", ["scope": NSNull()], "scope"),
                (
                    .post, "/v1/login",
                    ["client_id": TestServer.openClient, "email": user.email, "password": user.password, "scope": NSNull()], "scope"
                ),
            ]
            for (method, path, body, field) in cases {
                let response = try await client.json(method, path, body, bearer: user.accessToken)
                #expect(response.status == .unprocessableContent, "\(path) \(field): \(response.text)")
                let errors = response.object["errors"] as? [[String: Any]]
                #expect(
                    errors?.first?["field"] as? String == field && errors?.first?["code"] as? String == "invalid_type", "\(response.text)")
            }
            // Inside metadata a null is a value.
            let inner: [String: any Sendable] = ["tier": NSNull(), "plan": "pro"]
            let metadata = try await client.json(
                .patch, "/v1/me", ["profile": ["metadata": inner] as [String: any Sendable]], bearer: user.accessToken)
            #expect(metadata.status == .ok, "\(metadata.text)")
            // A field no request type has: ignored, null or not (it was 422 for null only).
            for extra in [NSNull(), "x"] as [any Sendable] {
                let login = try await client.json(
                    .post, "/v1/login",
                    ["client_id": TestServer.openClient, "email": user.email, "password": user.password, "x_unknown": extra])
                #expect(login.status == .ok, "\(login.text)")
                let nested: [String: any Sendable] = ["given_name": "Ada", "x_unknown": extra]
                let profile = try await client.json(.patch, "/v1/me", ["profile": nested], bearer: user.accessToken)
                #expect(profile.status == .ok, "\(profile.text)")
            }
            // The agreement versions are documented as "absent or null".
            let other = try await signUp(client, clientID: "terms")
            let accepted = try await client.json(
                .post, "/v1/me/agreements", ["platform_version": "1", "client_version": NSNull()], bearer: other.accessToken)
            #expect(accepted.status == .noContent, "\(accepted.text)")
        }
    }
}
