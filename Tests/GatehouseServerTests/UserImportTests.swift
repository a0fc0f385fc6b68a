import Argon2
import Foundation
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("User import")
struct UserImportTests {
    @Test(
        "JSON Lines import: plaintext and Argon2id hashes sign in, existing accounts are kept, bad lines are named",
        arguments: TestDatabase.available)
    func importLines(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        let prehashed = try Argon2.hashPHC(password: "imported with a hash", parameters: TestServer.testArgon2)
        try await server.withRouter { client in
            _ = try await signUp(client, email: "taken@example.com", password: "the original password")
            let importer = UserImport(persistence: server.persistence, hasher: server.services.hasher, clock: server.clock)
            let lines: [Substring] = [
                #"{"email": "Plain@Example.com", "password": "imported in plaintext", "email_verified": true, "profile": {"given_name": "Ada"}}"#,
                #"{"email": "hashed@example.com", "password_hash": "\#(prehashed)"}"#,
                #"{"email": "taken@example.com", "password": "would overwrite"}"#,
                #"{"phone": "+4712345678"}"#,
                #"{"email": "not an address", "password": "whatever it is"}"#,
                #"{"password": "no identifier at all"}"#,
                #"{"email": "both@example.com", "password": "x long enough", "password_hash": "\#(prehashed)"}"#,
                #"{"email": "badhash@example.com", "password_hash": "$argon2id$v=19$m=1,t=1,p=1$AAAA$AAAA"}"#,
                #"{"email": "md5@example.com", "password_hash": "5f4dcc3b5aa765d61d8327deb882cf99"}"#,
                #"not json"#,
                // Costs far above the server's own (G5): 1 GiB of Argon2id memory, bcrypt cost 31.
                #"{"email": "huge@example.com", "password_hash": "$argon2id$v=19$m=1048576,t=1,p=1$c2FsdHNhbHRzYWx0$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#,
                #"{"email": "slow@example.com", "password_hash": "$2b$31$abcdefghijklmnopqrstuuO3H3u4W7nPslvMGY8nYkNTlC8uL/eVa"}"#,
            ]
            let result = try await importer.importBatch(lines.enumerated().map { ($0.offset + 1, $0.element) })
            #expect(result.imported == 3)
            #expect(result.existing == 1)
            #expect(result.rejected.map(\.line) == [5, 6, 7, 8, 9, 10, 11, 12])

            let plain = try await logIn(client, email: "plain@example.com", password: "imported in plaintext")
            let me = try await client.json(.get, "/v1/me", bearer: plain.accessToken)
            #expect(me.object["email_verified"] as? Bool == true)
            #expect((me.object["profile"] as? [String: Any])?["given_name"] as? String == "Ada")
            _ = try await logIn(client, email: "hashed@example.com", password: "imported with a hash")
            // The existing account kept its own password.
            _ = try await logIn(client, email: "taken@example.com", password: "the original password")
            let overwritten = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": "taken@example.com", "password": "would overwrite"])
            #expect(overwritten.status == .unauthorized)
            let phoneOnly = try await server.persistence.read { try await $0.users.find(phone: "+4712345678") }
            #expect(phoneOnly != nil && phoneOnly?.hasPassword == false)
            #expect(try await server.persistence.read { try await $0.users.find(email: "badhash@example.com") } == nil)
        }
    }

    @Test(
        "MFA-9: an imported totp_secret is a confirmed authenticator app: the password asks for it and pyotp's code signs in; a bad secret, or one without the server secret to seal it, rejects the line"
    )
    func importTOTP() async throws {
        guard await SecondFactorTests.hasPyotp() else { return }
        let server = try await TestServer.startOpen(.sqlite)
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        try await server.withRouter { client in
            let importer = UserImport(
                persistence: server.persistence, hasher: server.services.hasher, clock: server.clock, secret: server.services.secret)
            let lines: [Substring] = [
                #"{"email": "moved@example.com", "password": "moved with my app", "totp_secret": "\#(secret)"}"#,
                #"{"email": "short@example.com", "password": "moved with my app", "totp_secret": "JBSWY3DP"}"#,
                #"{"email": "junk@example.com", "password": "moved with my app", "totp_secret": "not base32!"}"#,
            ]
            let result = try await importer.importBatch(lines.enumerated().map { ($0.offset + 1, $0.element) })
            #expect(result.imported == 1 && result.rejected.map(\.line) == [2, 3], "\(result)")
            let unsealed = UserImport(persistence: server.persistence, hasher: server.services.hasher, clock: server.clock)
            let refused = try await unsealed.importBatch([(1, #"{"email": "nosecret@example.com", "totp_secret": "\#(secret)"}"#)])
            #expect(refused.imported == 0 && refused.rejected.count == 1)

            let login = try await client.json(
                .post, "/v1/login", ["client_id": TestServer.openClient, "email": "moved@example.com", "password": "moved with my app"])
            #expect(login.string("code") == "mfa_required", "\(login.text)")
            let code = try #require(try await SecondFactorTests.pyotp(secret, at: server.clock.now()))
            let done = try await client.json(
                .post, "/v1/mfa/verify", ["flow_id": try #require(login.string("flow_id")), "factor": "totp", "code": code])
            #expect(done.status == .ok, "\(done.text)")
        }
    }
}
