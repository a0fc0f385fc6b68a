import Foundation
import Gatehouse
import Testing

@Suite("Deprecated names (scripted server)")
struct DeprecatedNamesTests {
    @available(*, deprecated, message: "Calls the deprecated names on purpose.")
    @Test("U-32: the old sign-in and sign-out names forward to the new ones and answer what they used to")
    func oldNamesForward() async throws {
        let server = ScriptedServer()
        await server.on("POST /v1/login", Fixture.tokens(1, isNew: false))
        await server.on("POST /v1/otp/verify", Fixture.tokens(2, isNew: true))
        await server.on("POST /v1/logout", .noContent)
        let client = Fixture.client(server)
        let user: User = try await client.logIn(email: "ada@example.com", password: "pw")
        #expect(user == Fixture.user && client.session?.accessToken == "access-1")
        let code: CodeSignIn = try await client.verifyCode("123456", for: .email("ada@example.com"))
        #expect(code.isNew && code.session.accessToken == "access-2")
        #expect(try await client.logOut().isRevoked)
        #expect(client.state == .signedOut)
    }
}
