import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK and usernames")
struct UsernameSDKTests {
    @Test(
        "SDK-22: an app signs up with a username, signs in with it in another width and case, reads it on the user, asks its identifier status, and gets the username's field error for a taken one"
    )
    func usernames() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: "named-app", settings: ["email_verification=off", "usernames=optional", "identifier_status=on"])
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: "named-app", store: InMemorySessionStore()))
            let signedUp = try await client.signUp(email: "lin@example.com", password: "a quiet orchard at dawn", username: "Lin.Wei")
            #expect(signedUp.user.username == "lin.wei")
            _ = try await client.signOut()
            let signedIn = try await client.signIn(username: "ＬＩＮ.wei", password: "a quiet orchard at dawn")
            #expect(signedIn.user.email == "lin@example.com" && signedIn.user.username == "lin.wei")
            #expect(try await client.identifierStatus(username: "lin.wei").exists)
            #expect(try await client.identifierStatus(username: "someone-else").exists == false)

            let other = AuthClient(configuration: .init(baseURL: base, clientID: "named-app", store: InMemorySessionStore()))
            let taken = try await #require(throws: SDKError.self) {
                try await other.signUp(email: "lin2@example.com", password: "a quiet orchard at dawn", username: "LIN.WEI")
            }
            #expect(taken.isValidationFailure && taken.validation.errors.first?.field == "username")
            #expect(taken.validation.errors.first?.code == .alreadyRegistered)
        }
    }
}
