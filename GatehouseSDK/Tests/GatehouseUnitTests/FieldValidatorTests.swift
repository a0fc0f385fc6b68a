import Foundation
import Gatehouse
import Testing

/// An app's own rule: no addresses at example.org, and a given name on sign-up. Records what it saw.
actor DomainRule: FieldValidator {
    private(set) var seen: [(FieldAction, [String: String])] = []

    func validate(_ fields: [String: String], for action: FieldAction) async -> ValidationResult {
        seen.append((action, fields))
        var result = ValidationResult()
        if fields["email"]?.hasSuffix("@example.org") == true {
            result.invalidate(field: "email", withErrorMessage: "Use your work address.")
        }
        if action == .signUp, fields["profile.given_name"] == nil {
            result.invalidate(field: "profile.given_name", code: .required, message: "Tell us your name.")
        }
        return result
    }
}

@Suite("The app's own field checks (scripted server)")
struct FieldValidatorTests {
    @Test(
        "U-28: a validator refusing a field stops the call before any request, as the same validation error a server gives; an accepted one goes out"
    )
    func validatorStopsCalls() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/signup", Fixture.tokens(1))
        await server.on("POST /v1/login", Fixture.tokens(2))
        await server.on("POST /v1/otp", .json(202, OTPSentResponse(sentTo: "a***@example.com", expiresIn: 600, resendAfter: 60)))
        await server.on("POST /v1/recovery", .json(202, MailSentResponse(resendAfter: 60)))
        let rule = DomainRule()
        let client = AuthClient(
            configuration: .init(
                baseURL: Fixture.baseURL, clientID: "app", store: InMemorySessionStore(), transport: server, validator: rule))

        let refused = try await #require(throws: GatehouseError.self) {
            try await client.signUp(email: "ada@example.org", password: "correct horse battery")
        }
        #expect(refused.isValidationFailure && refused.status == nil)
        #expect(refused.validation.fieldMessages == ["email": "Use your work address.", "profile.given_name": "Tell us your name."])
        await #expect(throws: GatehouseError.self) { try await client.signIn(email: "ada@example.org", password: "pw") }
        await #expect(throws: GatehouseError.self) { try await client.sendCode(to: .email("ada@example.org")) }
        await #expect(throws: GatehouseError.self) { try await client.requestPasswordReset(email: "ada@example.org") }
        #expect(await server.calls.isEmpty)

        _ = try await client.signUp(email: "ada@example.com", password: "correct horse battery", profile: Profile(givenName: "Ada"))
        try await client.signIn(email: "ada@example.com", password: "pw")
        _ = try await client.sendCode(to: .email("ada@example.com"))
        try await client.requestPasswordReset(email: "ada@example.com")
        // The log-in then ends the sign-up's session on the server (/oauth/revoke). Before the first
        // request that could carry a DPoP proof, the discovery document is read once (this server has none).
        #expect(
            await server.calls.map(\.path) == [
                "/.well-known/openid-configuration", "/v1/signup", "/v1/login", "/oauth/revoke", "/v1/otp", "/v1/recovery",
            ])
        #expect(await server.calls.allSatisfy { $0.headers["DPoP"] == nil })

        let seen = await rule.seen
        #expect(seen.map(\.0) == [.signUp, .logIn, .sendCode, .recoverPassword, .signUp, .logIn, .sendCode, .recoverPassword])
        #expect(seen[4].1 == ["email": "ada@example.com", "password": "correct horse battery", "profile.given_name": "Ada"])
    }
}
