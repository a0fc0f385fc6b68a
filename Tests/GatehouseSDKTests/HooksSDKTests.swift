import Foundation
import Gatehouse
import GatehouseServer
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

@Suite("SDK and the operator's hooks")
struct HooksSDKTests {
    @Test(
        "SDK-12: a before-sign-up hook's field error reaches the app as the ValidationResult naming the field; app_metadata a hook set is on the user"
    )
    func hookRefusalInSDK() async throws {
        let hooks = try await HookServer.start { request in
            let data = request.json["data"] as? [String: Any]
            if (data?["identifier"] as? String)?.hasSuffix("@blocked.example") == true {
                return .init(body: #"{"decision":"deny","errors":[{"field":"email","message":"Use your work address."}]}"#)
            }
            return .init(body: #"{"decision":"allow","app_metadata":{"plan":"trial"}}"#)
        }
        let path = try writeHooksFile([
            "hooks": [["url": "http://127.0.0.1:\(hooks.port)/hook", "points": ["signup"], "timeout_ms": 10000]]
        ])
        let server = try await TestServer.startLive() { $0.hooksFile = path }
        try await server.createClient(id: "hooked-app", settings: ["email_verification=off"])
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: "hooked-app", store: InMemorySessionStore()))
            let refused = try await #require(throws: SDKError.self) {
                try await client.signUp(email: "eve@blocked.example", password: "correct horse battery")
            }
            #expect(refused.code == .validationFailed)
            #expect(refused.validation.fieldMessages["email"] == "Use your work address.")
            #expect(client.currentUser == nil)

            guard case .signedIn(let signedUp) = try await client.signUp(email: "ann@work.example", password: "correct horse battery")
            else {
                Issue.record("expected a signed-in sign-up")
                return
            }
            let user = signedUp.user
            #expect(user.appMetadata?["plan"] == .string("trial"))
        }
        await hooks.stop()
    }
}
