import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Rate limits per address, country and server")
struct RateLimitTests {
    static let client = "limited-app"
    static let policyField = HTTPField.Name("RateLimit-Policy")!
    static let stateField = HTTPField.Name("RateLimit")!

    static func start(_ database: TestDatabase, limits: String) async throws -> TestServer {
        let server = try await TestServer.startOpen(database) {
            try? $0.rateLimits.apply(limits)
            $0.trustForwardedFor = true
        }
        try await server.createClient(id: client, settings: ["methods=password,email_otp,sms_otp"])
        return server
    }

    static func from(_ ip: String) -> HTTPFields { [HTTPField.Name("X-Forwarded-For")!: ip] }

    @Test("The spec reads NAME=COUNT/SECONDS, off and *; a wrong one names the valid names")
    func spec() throws {
        var policy = RateLimitPolicy()
        try policy.apply("*=5/60, sms_total=off,code_verify=3/900")
        #expect(policy[.signup] == RateLimit(5, per: 60))
        #expect(policy[.codeVerify] == RateLimit(3, per: 900))
        #expect(policy[.smsTotal] == nil)
        #expect(policy.description.contains("sms_total=off") && policy.description.contains("code_verify=3/900"))
        for bad in ["code_verify=3", "nope=1/1", "token=0/60", "token=5/x", "token"] {
            #expect(throws: RateLimitSpecError.self) { try policy.apply(bad) }
        }
        #expect(PhoneNumber.countryCode("+4791234567") == "47")
        #expect(PhoneNumber.countryCode("+12025550100") == "1")
        #expect(PhoneNumber.countryCode("+35312345678") == "353")
        #expect(PhoneNumber.countryCode("+74951234567") == "7")
    }

    @Test(
        "Code guesses from one address: exactly the limit of a parallel burst is checked, the rest get 429 with Retry-After and RateLimit headers",
        arguments: TestDatabase.available)
    func codeVerifyBurst(database: TestDatabase) async throws {
        let server = try await Self.start(database, limits: "code_verify=6/900")
        try await server.withRouter { client in
            let statuses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for i in 0..<20 {
                    group.addTask {
                        try await client.json(
                            .post, "/v1/otp/verify", ["client_id": Self.client, "email": "guess\(i)@example.com", "code": "123456"],
                            headers: Self.from("203.0.113.9"))
                    }
                }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            let refused = statuses.filter { $0.status == .tooManyRequests }
            #expect(statuses.count - refused.count == 6, "\(statuses.map(\.status.code))")
            #expect(refused.count == 14)
            for response in refused {
                #expect(response.string("code") == "rate_limited")
                let retry = Int(response.headers[.retryAfter] ?? "") ?? 0
                #expect((1...900).contains(retry))
                #expect(response.headers[Self.policyField] == "\"code_verify\";q=6;w=900")
                #expect(response.headers[Self.stateField]?.hasPrefix("\"code_verify\";r=0;t=") == true)
            }
            // Another address has its own budget, and is told what is left of it.
            let other = try await client.json(
                .post, "/v1/otp/verify", ["client_id": Self.client, "email": "x@example.com", "code": "123456"],
                headers: Self.from("198.51.100.7"))
            #expect(other.status == .unauthorized)
            #expect(other.headers[Self.stateField]?.hasPrefix("\"code_verify\";r=5;t=") == true)
            // The window ends: the first address may try again.
            server.clock.advance(by: 901)
            let later = try await client.json(
                .post, "/v1/otp/verify", ["client_id": Self.client, "email": "x@example.com", "code": "123456"],
                headers: Self.from("203.0.113.9"))
            #expect(later.status == .unauthorized)
        }
    }

    @Test("Every counting route tells its budget in RateLimit-Policy and RateLimit headers; routes that do not count carry none")
    func headersPerRoute() async throws {
        let server = try await Self.start(.sqlite, limits: "*=100/60")
        try await server.createClient(id: "status", settings: ["identifier_status=on"])
        try await server.withRouter { client in
            let email = "headers@example.com"
            let cases: [(String, RateLimitName, TestResponse)] = [
                (
                    "/v1/signup", .signup,
                    try await client.json(
                        .post, "/v1/signup", ["client_id": TestServer.openClient, "email": email, "password": "correct horse battery"])
                ),
                (
                    "/v1/verification", .codeSend,
                    try await client.json(.post, "/v1/verification", ["client_id": TestServer.openClient, "email": email])
                ),
                (
                    "/v1/verify", .codeVerify,
                    try await client.json(.post, "/v1/verify", ["client_id": TestServer.openClient, "email": email, "code": "000000"])
                ),
                (
                    "/v1/recovery", .codeSend,
                    try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": email])
                ),
                (
                    "/v1/recovery/verify", .codeVerify,
                    try await client.json(
                        .post, "/v1/recovery/verify", ["client_id": TestServer.openClient, "email": email, "code": "000000"])
                ),
                ("/v1/otp", .codeSend, try await client.json(.post, "/v1/otp", ["client_id": Self.client, "email": email])),
                (
                    "/v1/otp/verify", .codeVerify,
                    try await client.json(.post, "/v1/otp/verify", ["client_id": Self.client, "email": email, "code": "000000"])
                ),
                (
                    "/v1/identifiers/status", .identifierStatus,
                    try await client.json(.get, "/v1/identifiers/status?client_id=status&email=\(email)")
                ),
                (
                    "/oauth/token", .token,
                    try await client.form(
                        "/oauth/token", ["grant_type": "authorization_code", "code": "gh_ac_nope", "client_id": TestServer.openClient])
                ),
            ]
            for (path, name, response) in cases {
                #expect(
                    response.headers[Self.policyField]?.contains("\"\(name.rawValue)\";q=100;w=60") == true,
                    "\(path): \(response.status) \(response.headers)")
                #expect(response.headers[Self.stateField]?.contains("\"\(name.rawValue)\";r=") == true, "\(path)")
            }
            for path in ["/.well-known/jwks.json", "/health/live"] {
                #expect(try await client.json(.get, path).headers[Self.policyField] == nil)
            }
        }
    }

    @Test(
        "Sends: every code send counts per address; text messages also per country code and in total, without telling the caller those",
        arguments: TestDatabase.available)
    func smsBudgets(database: TestDatabase) async throws {
        let server = try await Self.start(database, limits: "sms_country=2/3600,sms_total=3/3600,sms_ip=100/3600")
        try await server.withRouter { client in
            func send(_ phone: String, from ip: String) async throws -> TestResponse {
                try await client.json(.post, "/v1/otp", ["client_id": Self.client, "phone": phone], headers: Self.from(ip))
            }
            let first = try await send("+4791000001", from: "192.0.2.1")
            #expect(first.status == .accepted)
            #expect(first.headers[Self.policyField] == "\"code_send\";q=60;w=900, \"sms_ip\";q=100;w=3600")
            #expect(try await send("+4791000002", from: "192.0.2.2").status == .accepted)
            let thirdNorwegian = try await send("+4791000003", from: "192.0.2.3")
            #expect(thirdNorwegian.status == .tooManyRequests)
            #expect(thirdNorwegian.headers[.retryAfter] != nil)
            #expect(thirdNorwegian.headers[Self.policyField]?.contains("sms_country") == false)
            #expect(try await send("+4670000001", from: "192.0.2.4").status == .accepted)
            // The server's whole budget (3) is spent; any country, any address.
            #expect(try await send("+4470000001", from: "192.0.2.5").status == .tooManyRequests)
            // A refused send counted nothing: mail sends (no SMS) still go.
            #expect(
                try await client.json(
                    .post, "/v1/otp", ["client_id": Self.client, "email": "m@example.com"], headers: Self.from("192.0.2.5")
                ).status == .accepted)
            #expect(try await server.deliverMail() == 4)
        }
    }

    @Test(
        "Authorization-code exchanges are counted per address before the code is spent: a refused exchange leaves the code usable",
        arguments: TestDatabase.available)
    func tokenLimit(database: TestDatabase) async throws {
        let server = try await Self.start(database, limits: "token=2/10")
        let redirect = "com.example.app:/verified"
        try await server.createClient(id: "mobile", redirectURIs: [redirect])
        try await server.withRouter { client in
            let verifier = String(repeating: "v", count: 50)
            let challenge = Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8))))
            let signup = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": "mobile", "email": "code@example.com", "password": "correct horse battery",
                    "redirect_to": redirect, "code_challenge": challenge, "code_challenge_method": "S256",
                ])
            #expect(signup.status == .created)
            try await server.deliverMail()
            let path = try #require(server.lastMail(to: "code@example.com", kind: "verification")?.linkPath("/verify?token="))
            let location = try #require(try await confirmLink(client, path).headers[.location])
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            func exchange(_ code: String) async throws -> TestResponse {
                try await client.form(
                    "/oauth/token",
                    [
                        "grant_type": "authorization_code", "code": code, "client_id": "mobile", "code_verifier": verifier,
                        "redirect_uri": redirect,
                    ])
            }
            #expect(try await exchange("gh_guess_1").string("error") == "invalid_grant")
            #expect(try await exchange("gh_guess_2").string("error") == "invalid_grant")
            let refused = try await exchange(code)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil && refused.headers[.cacheControl] == "no-store")
            #expect(refused.headers[Self.stateField]?.hasPrefix("\"token\";r=0;") == true)
            // Refreshes are not counted (nothing to guess; threat model A2).
            let user = try await signUp(client)
            #expect(try await refresh(client, user.refreshToken).status == .ok)
            server.clock.advance(by: 11)
            let after = try await exchange(code)
            #expect(after.status == .ok, "the refused exchange left the code: \(after.text)")
        }
    }

    @Test("Two nodes on one database share the count: a burst split across both gets exactly the limit through")
    func twoNodes() async throws {
        guard TestDatabase.available.contains(.postgres) else {
            print("skipped: set GATEHOUSE_TEST_POSTGRES_URL to run the two-node rate limit test")
            return
        }
        try await withTwoNodes(limits: "code_verify=7/900") { one, two in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for i in 0..<24 {
                    let node = i % 2 == 0 ? one : two
                    group.addTask {
                        try await node.json(
                            .post, "/v1/verify", ["client_id": TestServer.openClient, "email": "v\(i)@example.com", "code": "000000"]
                        ).status
                    }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 != .tooManyRequests }.count == 7, "\(statuses.map(\.code))")
        }
    }
}
