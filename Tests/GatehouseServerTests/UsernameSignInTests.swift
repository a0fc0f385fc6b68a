import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Usernames: sign-up and sign-in")
struct UsernameSignInTests {
    static func fieldCode(_ response: TestResponse, _ field: String) -> String? {
        ((response.object["errors"] as? [[String: Any]])?.first { $0["field"] as? String == field })?["code"] as? String
    }

    @Test(
        "USR-2: on a client with usernames, sign-up stores the folded name and signs in by it or by the address; Ａda and ada collide; reserved and malformed names are refused; a client without usernames refuses the field and one that requires it asks for it; an unknown username and a wrong password get the same 401; identifier status answers for a username only where the client offers it",
        arguments: TestDatabase.available)
    func usernames(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        _ = try await server.createClient(id: "named", settings: ["email_verification=off", "usernames=optional", "identifier_status=on"])
        _ = try await server.createClient(id: "must-name", settings: ["email_verification=off", "usernames=required"])
        try await server.withRouter { client in
            let created = try await client.json(
                .post, "/v1/signup",
                ["client_id": "named", "email": "ada@example.com", "password": "a quiet orchard at dawn", "username": "Ａda"])
            #expect(created.status == .created, "\(created.text)")
            #expect((created.object["user"] as? [String: Any])?["username"] as? String == "ada")
            let stored = try await server.persistence.read { try await $0.users.find(username: "ada") }
            #expect(stored?.email == "ada@example.com")

            let collision = try await client.json(
                .post, "/v1/signup",
                ["client_id": "named", "email": "other@example.com", "password": "a quiet orchard at dawn", "username": "ADA"])
            #expect(collision.status == .unprocessableContent && Self.fieldCode(collision, "username") == "already_registered")
            #expect(try await server.persistence.read { try await $0.users.find(email: "other@example.com") } == nil)
            for (name, code) in [("admin", "invalid_value"), ("Ａｄｍｉｎ", "invalid_value"), ("a@b", "invalid_format"), ("ab", "too_short")] {
                let refused = try await client.json(
                    .post, "/v1/signup",
                    [
                        "client_id": "named", "email": "n-\(UUID().uuidString.prefix(6))@example.com",
                        "password": "a quiet orchard at dawn",
                        "username": name,
                    ])
                #expect(Self.fieldCode(refused, "username") == code, "\(name): \(refused.text)")
            }
            let off = try await client.json(
                .post, "/v1/signup",
                [
                    "client_id": TestServer.openClient, "email": "off@example.com", "password": "a quiet orchard at dawn",
                    "username": "offname",
                ])
            #expect(Self.fieldCode(off, "username") == "invalid_value")
            let missing = try await client.json(
                .post, "/v1/signup", ["client_id": "must-name", "email": "must@example.com", "password": "a quiet orchard at dawn"])
            #expect(Self.fieldCode(missing, "username") == "required")

            // Sign-in by username (any width or case) or by address; the same user.
            for name in ["ada", "ADA", "Ａda"] {
                let byName = try await client.json(
                    .post, "/v1/login", ["client_id": "named", "username": name, "password": "a quiet orchard at dawn"])
                #expect(byName.status == .ok, "\(name): \(byName.text)")
                #expect((byName.object["user"] as? [String: Any])?["email"] as? String == "ada@example.com")
            }
            _ = try await logIn(client, email: "ada@example.com", password: "a quiet orchard at dawn", clientID: "named")
            let wrong = try await client.json(
                .post, "/v1/login", ["client_id": "named", "username": "ada", "password": "not the password"])
            let unknown = try await client.json(
                .post, "/v1/login", ["client_id": "named", "username": "nobody-here", "password": "not the password"])
            #expect(wrong.status == .unauthorized && unknown.status == .unauthorized)
            #expect(wrong.text == unknown.text)

            // Identifier status: the client's setting decides, as for addresses.
            let known = try await client.json(.get, "/v1/identifiers/status?client_id=named&username=%EF%BC%A1DA")
            #expect(known.status == .ok && known.object["exists"] as? Bool == true, "\(known.text)")
            let stranger = try await client.json(.get, "/v1/identifiers/status?client_id=named&username=nobody-here")
            #expect(stranger.object["exists"] as? Bool == false)
            let hidden = try await client.json(.get, "/v1/identifiers/status?client_id=\(TestServer.openClient)&username=ada")
            let hiddenAddress = try await client.json(
                .get, "/v1/identifiers/status?client_id=\(TestServer.openClient)&email=ada%40example.com")
            #expect(hidden.status == .notFound && hidden.text == hiddenAddress.text, "\(hidden.text)")
        }
    }

    @Test(
        "USR-3: the hosted pages of a client with usernames ask for one at sign-up and take a username or an address at sign-in"
    )
    func hostedPages() async throws {
        let (server, _) = try await Hosted.start(["usernames=optional"])
        try await server.withRouter { client in
            let jar = HostedJar(client)
            let page = try await jar.open(Hosted.request(challenge: pkcePair().challenge))
            #expect(page.text.contains("name=\"email\" type=\"text\""), "\(page.text)")
            let signupPage = try await jar.open(try #require(HostedJar.attribute(page.text, after: "id=\"signup-link\" href=\"")))
            #expect(signupPage.text.contains("id=\"username\""))
            let created = try await jar.submit(
                try #require(HostedJar.action(signupPage, form: "signup")),
                [("email", "grace@example.com"), ("username", "Grace_H"), ("password", "a lantern by the pier")],
                csrf: HostedJar.csrf(signupPage))
            #expect(created.status == .seeOther && HostedJar.query(created)["code"] != nil, "\(created.text)")

            let other = HostedJar(client)
            let signedIn = try await Hosted.signIn(
                other, Hosted.request(challenge: pkcePair().challenge), email: "GRACE_H", password: "a lantern by the pier")
            #expect(signedIn.status == .seeOther && HostedJar.query(signedIn)["code"] != nil, "\(signedIn.text)")
        }
    }
}
