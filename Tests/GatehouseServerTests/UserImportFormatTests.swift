import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Hashes made by each system's own algorithm (`scripts/foreign-hashes.py`: Django's make_password,
/// PyPI's bcrypt, hashlib's PBKDF2, passlib's scrypt, argon2-cffi) and Firebase's published scrypt
/// test vector, imported from each system's export format, signed in with, and upgraded.
@Suite("User import from other systems")
struct UserImportFormatTests {
    static let password = "moving in from elsewhere"

    static func hashes() async throws -> [String: Any]? {
        let script = ErrorCodeCatalogTests.root.appendingPathComponent("scripts/foreign-hashes.py").path
        let (status, output) = try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, password])
        guard status == 0, let data = output.split(separator: "\n").last.map({ Data($0.utf8) }) else { return nil }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    static func available() async -> Bool {
        guard (try? await hashes()) ?? nil != nil else {
            print("skipped: pip install django bcrypt passlib argon2-cffi to run the import tests against other systems' hashes")
            return false
        }
        return true
    }

    /// Firebase's published test vector (github.com/firebase/scrypt, README).
    static let firebase = ExportFormat.FirebaseHashConfig(
        signerKey: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==", saltSeparator: "Bw==",
        rounds: 8, memoryCost: 14)

    static func json(_ value: Any) throws -> Data { try JSONSerialization.data(withJSONObject: value) }

    @Test(
        "UIM-1 Firebase, Auth0, Supabase, Keycloak and Django exports import with their hashes, identities, verified flags, metadata and creation times; each signs in, is upgraded to Argon2id in the database, and a wrong password is refused",
        .enabled("needs django, bcrypt, passlib and argon2-cffi") { await Self.available() },
        arguments: TestDatabase.available)
    func exports(database: TestDatabase) async throws {
        let h = try #require(try await Self.hashes())
        func keycloak(_ key: String, algorithm: String, extra: [String: Any] = [:]) throws -> [String: Any] {
            let made = try #require(h[key] as? [String: Any])
            let secret = String(decoding: try Self.json(["value": made["value"]!, "salt": made["salt"]!]), as: UTF8.self)
            var data: [String: Any] = ["hashIterations": made["iterations"]!, "algorithm": algorithm]
            if !extra.isEmpty { data["additionalParameters"] = extra }
            return ["type": "password", "secretData": secret, "credentialData": String(decoding: try Self.json(data), as: UTF8.self)]
        }
        let argon2 = try #require(h["keycloak_argon2"] as? [String: Any])
        let exports: [(ExportFormat, Data, [(login: String, password: String)])] = [
            (
                .firebase,
                try Self.json([
                    "users": [
                        [
                            "localId": "fb1", "email": "fb@example.com", "emailVerified": true, "displayName": "Fire Base",
                            "passwordHash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
                            "salt": "42xEC+ixf3L2lw==", "createdAt": "1600000000000",
                            "providerUserInfo": [["providerId": "google.com", "rawId": "g-111", "email": "fb@example.com"]],
                            "customAttributes": #"{"plan":"pro"}"#,
                        ]
                    ]
                ]), [("fb@example.com", "user1password")]
            ),
            (
                .auth0,
                Data(
                    (try [
                        [
                            "user_id": "auth0|a1", "email": "a0@example.com", "email_verified": true,
                            "created_at": "2021-03-04T05:06:07.890Z",
                            "passwordHash": h["bcrypt_2b"]!, "user_metadata": ["colour": "teal"],
                            "identities": [["provider": "google-oauth2", "user_id": "g-222", "isSocial": true]],
                        ]
                    ].map { String(decoding: try Self.json($0), as: UTF8.self) }.joined(separator: "\n")).utf8),
                [("a0@example.com", Self.password)]
            ),
            (
                .supabase,
                try Self.json([
                    [
                        "id": "8c1f", "email": "sb@example.com", "encrypted_password": h["bcrypt_2a"]!,
                        "email_confirmed_at": "2022-01-02 03:04:05.123456+00", "created_at": "2022-01-01T00:00:00.654321+00:00",
                        "raw_user_meta_data": ["full_name": "Supa Base"], "raw_app_meta_data": ["provider": "email", "role": "editor"],
                    ]
                ]), [("sb@example.com", Self.password)]
            ),
            (
                .keycloak,
                try Self.json([
                    "realm": "moving",
                    "users": [
                        [
                            "username": "kc256", "email": "kc256@example.com", "emailVerified": true, "firstName": "Kay",
                            "createdTimestamp": 1_650_000_000_000,
                            "credentials": [try keycloak("keycloak_pbkdf2_sha256", algorithm: "pbkdf2-sha256")],
                            "federatedIdentities": [["identityProvider": "github", "userId": "gh-333", "userName": "kay"]],
                        ],
                        [
                            "username": "kc512", "email": "kc512@example.com", "emailVerified": true,
                            "credentials": [try keycloak("keycloak_pbkdf2_sha512", algorithm: "pbkdf2-sha512")],
                        ],
                        [
                            "username": "kcargon", "email": "kcargon@example.com", "emailVerified": true,
                            "credentials": [
                                try keycloak(
                                    "keycloak_argon2", algorithm: "argon2",
                                    extra: [
                                        "type": ["id"], "version": ["1.3"], "memory": ["\(argon2["memory"]!)"], "parallelism": ["1"],
                                        "hashLength": ["32"],
                                    ])
                            ],
                        ],
                    ],
                ]), [("kc256@example.com", Self.password), ("kc512@example.com", Self.password), ("kcargon@example.com", Self.password)]
            ),
            (
                .django,
                try Self.json([
                    [
                        "model": "auth.user", "pk": 1,
                        "fields": [
                            "username": "djangonaut", "email": "dj@example.com", "password": h["django"]!, "first_name": "Dj",
                            "last_name": "Ango", "is_active": true, "date_joined": "2019-05-06T07:08:09.123Z",
                        ],
                    ],
                    [
                        "model": "auth.user", "pk": 2,
                        "fields": ["username": "gone", "email": "gone@example.com", "password": "!", "is_active": false],
                    ],
                ]), [("dj@example.com", Self.password)]
            ),
        ]
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let importer = UserImport(persistence: server.persistence, hasher: server.services.hasher, clock: server.clock)
            for (format, data, logins) in exports {
                let converted = try format.convert(data, firebase: Self.firebase)
                let lines = converted.enumerated().compactMap { index, entry -> (Int, Substring)? in
                    if case .line(let text) = entry { return (index + 1, Substring(text)) }
                    return nil
                }
                let dry = try await importer.importBatch(lines, dryRun: true)
                #expect(dry.imported == logins.count && dry.rejected.isEmpty, "\(format) dry run: \(dry)")
                let result = try await importer.importBatch(lines)
                #expect(result.imported == logins.count && result.rejected.isEmpty, "\(format): \(result)")
                for (login, password) in logins {
                    // Kept as the other system made it until the user signs in (Keycloak's Argon2id too, in its costs).
                    let before = try await Self.storedHash(server, login)
                    let wrong = try await client.json(
                        .post, "/v1/login", ["client_id": TestServer.openClient, "email": login, "password": "not the password"])
                    #expect(wrong.status == .unauthorized, "\(format) \(login): \(wrong.text)")
                    let signedIn = try await logIn(client, email: login, password: password)
                    #expect(!signedIn.accessToken.isEmpty)
                    let after = try await Self.storedHash(server, login)
                    #expect(after != before && after.hasPrefix("$argon2id$"), "\(format) \(login) was not upgraded")
                }
            }
            // Django's inactive account is refused by the converter, with its reason.
            let django = try ExportFormat.django.convert(exports[4].1)
            #expect(django.last == .rejected("the account is inactive in Django"))

            // What else came along: identities sign in to the same account, flags, metadata, creation times.
            let firebaseUser = try #require(try await server.persistence.read { try await $0.users.find(email: "fb@example.com") })
            #expect(firebaseUser.emailVerified && firebaseUser.createdAt == Date(timeIntervalSince1970: 1_600_000_000))
            #expect(firebaseUser.appMetadata?["plan"] == .string("pro") && firebaseUser.profile.name == "Fire Base")
            let google = try await server.persistence.read { try await $0.credentials.find(type: .oidc, identifier: "google:g-111") }
            #expect(google?.userID == firebaseUser.id)
            let auth0 = try #require(try await server.persistence.read { try await $0.users.find(email: "a0@example.com") })
            #expect(auth0.profile.metadata?["colour"] == .string("teal"))
            #expect(
                try await server.persistence.read { try await $0.credentials.find(type: .oidc, identifier: "google:g-222") }?.userID
                    == auth0.id)
            let supabase = try #require(try await server.persistence.read { try await $0.users.find(email: "sb@example.com") })
            #expect(supabase.emailVerified && supabase.appMetadata == ["role": .string("editor")])
            let keycloakUser = try #require(try await server.persistence.read { try await $0.users.find(username: "kc256") })
            #expect(keycloakUser.profile.givenName == "Kay" && keycloakUser.createdAt == Date(timeIntervalSince1970: 1_650_000_000))
            #expect(
                try await server.persistence.read { try await $0.credentials.find(type: .oidc, identifier: "github:gh-333") }?.userID
                    == keycloakUser.id)
            let djangoUser = try #require(try await server.persistence.read { try await $0.users.find(username: "djangonaut") })
            #expect(djangoUser.email == "dj@example.com" && !djangoUser.emailVerified && djangoUser.profile.familyName == "Ango")
        }
    }

    @Test(
        "UIM-2 passlib scrypt and argon2-cffi Argon2i and Argon2d hashes in JSON Lines sign in and upgrade; costs past the bounds and unknown forms are refused at import with the reason",
        .enabled("needs django, bcrypt, passlib and argon2-cffi") { await Self.available() })
    func jsonLines() async throws {
        let h = try #require(try await Self.hashes())
        let scrypt = try #require(h["scrypt"] as? String)
        let argon2i = try #require(h["argon2i"] as? String)
        let argon2d = try #require(h["argon2d"] as? String)
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withRouter { client in
            let importer = UserImport(persistence: server.persistence, hasher: server.services.hasher, clock: server.clock)
            let lines: [Substring] = [
                #"{"email": "scrypt@example.com", "password_hash": "\#(scrypt)"}"#,
                #"{"email": "argon2i@example.com", "password_hash": "\#(argon2i)"}"#,
                #"{"email": "argon2d@example.com", "password_hash": "\#(argon2d)"}"#,
                // 2^20 · 8 · 128 bytes = 1 GiB of scrypt memory; 10 million PBKDF2 iterations.
                #"{"email": "huge@example.com", "password_hash": "$scrypt$ln=20,r=8,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#,
                #"{"email": "slow@example.com", "password_hash": "pbkdf2_sha256$10000000$salt$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}"#,
                #"{"email": "sha1@example.com", "password_hash": "sha1$salt$0123456789abcdef0123456789abcdef01234567"}"#,
            ]
            let result = try await importer.importBatch(lines.enumerated().map { ($0.offset + 1, $0.element) })
            #expect(result.imported == 3 && result.rejected.map(\.line) == [4, 5, 6], "\(result)")
            #expect(result.rejected.allSatisfy { $0.reason.contains("password_hash") })
            for email in ["scrypt@example.com", "argon2i@example.com", "argon2d@example.com"] {
                let wrong = try await client.json(
                    .post, "/v1/login", ["client_id": TestServer.openClient, "email": email, "password": "not the password"])
                #expect(wrong.status == .unauthorized)
                _ = try await logIn(client, email: email, password: Self.password)
                #expect(try await Self.storedHash(server, email).hasPrefix("$argon2id$"), "\(email) was not upgraded")
            }
        }
    }

    /// The password hash the account's credential holds now.
    static func storedHash(_ server: TestServer, _ email: String) async throws -> String {
        let credential = try await server.persistence.read { try await $0.credentials.find(type: .password, identifier: email) }
        let config = try #require(credential?.config)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(config.utf8)) as? [String: Any])
        return try #require(object.values.compactMap { $0 as? String }.first { $0.hasPrefix("$") || $0.hasPrefix("pbkdf2_") })
    }
}
