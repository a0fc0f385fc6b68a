import Foundation
import Gatehouse
import Testing

/// What the server answers, and what the app gets as a ``GatehouseError``.
@Suite("Error mapping (scripted server)")
struct ErrorMappingTests {
    @Test("U-4: a problem document keeps its code, status, detail, field errors and Retry-After")
    func problemDocuments() async throws {
        let server = ScriptedServer()
        let fields = [FieldError(field: "password", code: .tooShort, message: "Use at least 10 characters.")]
        await server.on(
            "POST /v1/signup", .problem(422, .validationFailed, errors: fields),
            .problem(429, .rateLimited, headers: ["Retry-After": "17"]))
        let client = Fixture.client(server)

        let invalid = try await #require(throws: GatehouseError.self) {
            try await client.signUp(email: "ada@example.com", password: "short")
        }
        #expect(invalid.code == .validationFailed && invalid.status == 422 && invalid.isValidationFailure)
        #expect(invalid.validation.errors == fields)
        #expect(invalid.message == "Detail of validation_failed")
        #expect(!invalid.isRetryable)

        let limited = try await #require(throws: GatehouseError.self) {
            try await client.signUp(email: "ada@example.com", password: "long enough password")
        }
        #expect(limited.isRateLimited && limited.retryAfter == 17 && limited.isRetryable)
    }

    @Test("U-5: OAuth errors, unreadable answers and a dead network each become a GatehouseError")
    func otherFailures() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", .json(401, OAuthErrorBody(error: "invalid_grant", errorDescription: "Gone.")))
        let client = Fixture.client(server)
        let oauth = try await #require(throws: GatehouseError.self) { try await client.signIn(email: "a@example.com", password: "p") }
        #expect(oauth.code == .invalidGrant && oauth.isSessionEnded && oauth.message == "Gone.")

        await server.on(
            "POST /v1/login",
            ScriptedServer.Reply(status: 502, headers: ["Content-Type": "text/html"], body: Data("<h1>Bad gateway</h1>".utf8)))
        let gateway = try await #require(throws: GatehouseError.self) { try await client.signIn(email: "a@example.com", password: "p") }
        #expect(gateway.code == GatehouseError.invalidResponse && gateway.status == 502 && gateway.isRetryable)

        await server.on("POST /v1/login", .offline)
        let offline = try await #require(throws: GatehouseError.self) { try await client.signIn(email: "a@example.com", password: "p") }
        #expect(offline.isNetworkError && offline.status == nil && offline.isRetryable)

        await server.on("POST /v1/login", .json(200, ["unexpected": true]))
        let garbled = try await #require(throws: GatehouseError.self) { try await client.signIn(email: "a@example.com", password: "p") }
        #expect(garbled.code == GatehouseError.invalidResponse && garbled.status == 200)
        #expect(client.currentUser == nil)
    }

    @Test("U-6: a refused refresh signs out with sessionRevoked; a failed network keeps the session")
    func refreshFailures() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        await server.on("POST /oauth/token", .offline, .json(400, OAuthErrorBody(error: "invalid_grant")))
        let client = Fixture.client(server)
        try await client.signIn(email: "ada@example.com", password: "pw")

        let offline = try await #require(throws: GatehouseError.self) { try await client.refreshSession() }
        #expect(offline.isNetworkError)
        #expect(client.currentUser == Fixture.user)

        let refused = try await #require(throws: GatehouseError.self) { try await client.refreshSession() }
        #expect(refused.isSessionEnded)
        #expect(client.state == .signedOut && client.session == nil)
        let after = try await #require(throws: GatehouseError.self) { try await client.accessToken() }
        #expect(after.code == GatehouseError.notSignedIn && after.isSessionEnded)
    }

    @Test("U-7: wrong codes and PINs carry their counts")
    func counts() async throws {
        let server = ScriptedServer()
        var problem = Problem(status: 401, code: .invalidCode, title: "Invalid code", remainingAttempts: 2)
        await server.on("POST /v1/otp/verify", .json(401, problem))
        let client = Fixture.client(server)
        let wrong = try await #require(throws: GatehouseError.self) {
            try await client.signIn(code: "000000", for: .email("ada@example.com"))
        }
        #expect(wrong.isInvalidCode && wrong.remainingAttempts == 2)

        problem = Problem(status: 401, code: .deviceDeregistered, title: "Gone", failureCounts: FailureCounts(max: 3, previous: 3))
        await server.on("POST /v1/otp/verify", .json(401, problem))
        let gone = try await #require(throws: GatehouseError.self) {
            try await client.signIn(code: "000000", for: .email("ada@example.com"))
        }
        #expect(gone.isDeviceDeregistered && gone.failureCounts == FailureCounts(max: 3, previous: 3))
    }

    @Test("U-8: signOut reports a server that refused as localOnly with the error, and still signs out here")
    func logoutReportsErrors() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1))
        await server.on("POST /v1/logout", .problem(500, .internalError))
        let client = Fixture.client(server)
        try await client.signIn(email: "ada@example.com", password: "pw")
        let outcome = try await client.signOut()
        guard case .localOnly(let error) = outcome else {
            Issue.record("expected localOnly, got \(outcome)")
            return
        }
        #expect(error.status == 500 && error.code == .internalError)
        #expect(client.state == .signedOut)
        #expect(try await client.signOut().isRevoked == false)
    }
}
