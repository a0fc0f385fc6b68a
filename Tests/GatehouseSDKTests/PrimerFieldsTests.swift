import Foundation
import Gatehouse
import GatehouseTesting
import Synchronization
import Testing

private typealias SDKError = Gatehouse.GatehouseError

/// Records what the app's validator was asked.
private final class RecordingValidator: FieldValidator {
    let calls = Mutex<[(FieldAction, [String: String])]>([])
    func validate(_ fields: [String: String], for action: FieldAction) async -> ValidationResult {
        calls.withLock { $0.append((action, fields)) }
        var result = ValidationResult()
        if fields["favourite_colour"] == "beige" { result.invalidate(field: "favourite_colour", withErrorMessage: "Nobody likes beige.") }
        return result
    }
}

@Suite("SDK: the Primer seed's field calls against a live server")
struct PrimerFieldsTests {
    @Test(
        "SDK-13: signUp/logIn/recoverPassword(withFields:) and handleFields run the validator once with every field, keep non-secret fields as user properties and never a password or PIN"
    )
    func fieldCalls() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: "primer-app", settings: ["email_verification=off"])
        try await withLiveServer(server) { base in
            let validator = RecordingValidator()
            let client = AuthClient(
                configuration: .init(baseURL: base, clientID: "primer-app", store: InMemorySessionStore(), validator: validator))
            let fields = ["email": "pat@example.com", "password": "correct horse battery", "given_name": "Pat", "favourite_colour": "teal"]

            let missing = try await #require(throws: SDKError.self) { try await client.signUp(withFields: ["password": "x"]) }
            #expect(missing.validation.fieldMessages["email"] != nil && missing.status == nil)
            let beige = try await #require(throws: SDKError.self) {
                try await client.signUp(withFields: fields.merging(["favourite_colour": "beige"]) { $1 })
            }
            #expect(beige.validation.fieldMessages["favourite_colour"] == "Nobody likes beige.")

            validator.calls.withLock { $0.removeAll() }
            guard case .signedIn(let signedUp) = try await client.signUp(withFields: fields) else {
                Issue.record("expected a signed-in sign-up")
                return
            }
            let user = signedUp.user
            // Once, with every field of the form.
            #expect(validator.calls.withLock { $0.map(\.0) } == [.signUp])
            #expect(validator.calls.withLock { $0.first?.1 } == fields)
            #expect(user.profile.givenName == "Pat")
            #expect(user.profile.metadata == ["favourite_colour": .string("teal")])

            _ = try await client.signOut()
            let again = try await client.signIn(withFields: [
                "email": "pat@example.com", "password": "correct horse battery", "newsletter": "weekly",
            ]).user
            #expect(again.profile.metadata == ["favourite_colour": .string("teal"), "newsletter": .string("weekly")])

            let handled = try await client.handleFields(["plan": "pro", "pin": "1234", "password": "nope"])
            #expect(handled.profile.metadata?["plan"] == .string("pro"))
            #expect(handled.profile.metadata?["pin"] == nil && handled.profile.metadata?["password"] == nil)

            try await client.recoverPassword(withFields: ["email": "pat@example.com"])
            try await server.deliverMail()
            #expect(server.lastMail(to: "pat@example.com", kind: "recovery") != nil)
        }
    }
}
