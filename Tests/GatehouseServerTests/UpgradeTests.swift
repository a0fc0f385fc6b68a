import Argon2
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdBcrypt
import HummingbirdTesting
import Logging
import Testing

/// A database written by the schema before credentials had identifiers (version 3), upgraded by
/// starting the current server on it: everyone still signs in, sessions still refresh, open codes
/// still verify.
@Suite("Upgrading a populated database")
struct UpgradeTests {
    @Test("Users, passwords, sessions and codes written by schema 3 survive migration 4", arguments: TestDatabase.available)
    func upgrade(database: TestDatabase) async throws {
        let (url, dropDatabase) = try await database.make()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-upgrade-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("secret").path
        let secret = try ServerSecret.loadOrCreate(path: secretFile)

        var logger = Logger(label: "upgrade-test")
        logger.logLevel = .critical
        let old = try await SQLPersistence.open(try DatabaseURL(url), logger: logger, migrateUpTo: 3)
        let now = Int(Date().timeIntervalSince1970 * 1000)
        let ada = UUID().uuidString.lowercased(), bob = UUID().uuidString.lowercased()
        let carol = UUID().uuidString.lowercased(), dave = UUID().uuidString.lowercased()
        let adaHash = try Argon2.hashPHC(password: "ada's old passphrase", parameters: TestServer.testArgon2)
        let bobHash = Bcrypt.hash("bob's imported passphrase", cost: 4)
        let refreshToken = Secrets.token(prefix: RefreshTokenFormat.prefix)
        let sessionID = UUID().uuidString.lowercased()
        let code = "482913"
        let codeHash = secret.codeHash(code, binding: "verify_email:legacy-app:carol@example.com")
        let profile = #"{"given_name":"Ada"}"#
        try await old.executeRaw([
            """
            INSERT INTO clients (id, name, kind, secret_hash, redirect_uris, scopes, settings, is_default, created_at, updated_at)
            VALUES ('legacy-app', 'Legacy', 'public', NULL, '[]', '["openid","profile","email","offline_access"]',
                    '{"email_verification":"off"}', 0, \(now), \(now))
            """,
            "INSERT INTO users (id, email, email_verified, phone, phone_verified, profile, state, created_at, updated_at) VALUES ('\(ada)', 'ada@example.com', 1, NULL, 0, '\(profile)', 'active', \(now), \(now))",
            "INSERT INTO users (id, email, email_verified, phone, phone_verified, profile, state, created_at, updated_at) VALUES ('\(bob)', 'bob@example.com', 1, '+4790012345', 1, '{}', 'active', \(now), \(now))",
            "INSERT INTO users (id, email, email_verified, phone, phone_verified, profile, state, created_at, updated_at) VALUES ('\(carol)', 'carol@example.com', 0, NULL, 0, '{}', 'active', \(now), \(now))",
            "INSERT INTO users (id, email, email_verified, phone, phone_verified, profile, state, created_at, updated_at) VALUES ('\(dave)', NULL, 0, '+4790099999', 1, '{}', 'active', \(now), \(now))",
            "INSERT INTO credentials (user_id, kind, secret, created_at, updated_at) VALUES ('\(ada)', 'password', '\(adaHash)', \(now), \(now))",
            "INSERT INTO credentials (user_id, kind, secret, created_at, updated_at) VALUES ('\(bob)', 'password', '\(bobHash)', \(now), \(now))",
            "INSERT INTO credentials (user_id, kind, secret, created_at, updated_at) VALUES ('\(carol)', 'password', '\(adaHash)', \(now), \(now))",
            """
            INSERT INTO sessions (id, user_id, client_id, amr, scopes, user_agent, ip_address, created_at, last_used_at, expires_at)
            VALUES ('\(sessionID)', '\(ada)', 'legacy-app', '["pwd"]', '["profile","email","offline_access"]', 'old app', '192.0.2.1',
                    \(now), \(now), \(now + 86_400_000))
            """,
            """
            INSERT INTO refresh_tokens (token_hash, session_id, parent_hash, created_at, expires_at)
            VALUES ('\(Secrets.sha256Hex(refreshToken))', '\(sessionID)', NULL, \(now), \(now + 86_400_000))
            """,
            """
            INSERT INTO one_time_codes (id, purpose, identifier, client_id, user_id, code_hash, token_hash, attempts, max_attempts,
                                        data, created_at, expires_at)
            VALUES ('\(UUID().uuidString.lowercased())', 'verify_email', 'carol@example.com', 'legacy-app', '\(carol)',
                    '\(codeHash)', NULL, 0, 5, '{}', \(now), \(now + 600_000))
            """,
        ])
        await old.shutdown()

        // The current server on that database: migration 4 runs at start.
        let server = try await TestServer.start(database) { configuration in
            configuration.databaseURL = url
            configuration.secretFile = secretFile
        }
        try await server.withRouter { client in
            let adaLogin = try await client.json(
                .post, "/v1/login", ["client_id": "legacy-app", "email": "ada@example.com", "password": "ada's old passphrase"])
            #expect(adaLogin.status == .ok, "\(adaLogin.text)")
            #expect((adaLogin.object["user"] as? [String: Any])?["has_password"] as? Bool == true)
            let bobLogin = try await client.json(
                .post, "/v1/login", ["client_id": "legacy-app", "email": "bob@example.com", "password": "bob's imported passphrase"])
            #expect(bobLogin.status == .ok, "\(bobLogin.text)")
            let wrong = try await client.json(
                .post, "/v1/login", ["client_id": "legacy-app", "email": "ada@example.com", "password": "not ada's passphrase"])
            #expect(wrong.status == .unauthorized)

            let refreshed = try await refresh(client, refreshToken, clientID: "legacy-app")
            #expect(refreshed.status == .ok, "\(refreshed.text)")

            let verified = try await client.json(
                .post, "/v1/verify", ["client_id": "legacy-app", "email": "carol@example.com", "code": code])
            #expect(verified.status == .ok, "\(verified.text)")

            // Dave never had a password: still none, and a password sign-in finds nothing.
            let daveLogin = try await client.json(
                .post, "/v1/login", ["client_id": "legacy-app", "email": "+4790099999", "password": "anything at all"])
            #expect(daveLogin.status == .unauthorized)
        }
        let reopened = try await SQLPersistence.open(try DatabaseURL(url), logger: logger)
        let bobCredential = try #require(
            try await reopened.read { try await $0.credentials.find(type: .password, identifier: "+4790012345") })
        #expect(bobCredential.identifiers.sorted() == ["+4790012345", "bob@example.com"])
        #expect(bobCredential.config.contains("$argon2id$"), "the imported bcrypt hash is upgraded at the first sign-in")
        let daveCredentials = try await reopened.read { try await $0.credentials.list(userID: UUID(uuidString: dave)!, type: nil) }
        #expect(daveCredentials.isEmpty)
        #expect(try await reopened.read { try await $0.users.find(phone: "+4790099999") }?.hasPassword == false)
        await reopened.shutdown()
        await dropDatabase()
        try? FileManager.default.removeItem(at: directory)
    }
}
