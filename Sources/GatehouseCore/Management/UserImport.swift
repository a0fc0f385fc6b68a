import Argon2
import Foundation
import GatehouseAPI

/// Bulk import of accounts (JSON Lines), for operators moving users in from another system and for
/// seeding benchmarks. Each line is one user:
/// `{"email": "...", "email_verified": true, "phone": "+47...", "password": "..." | "password_hash": "$argon2id$..." | "$2b$...", "profile": {...}, "totp_secret": "BASE32"}`.
/// A `totp_secret` (a user's authenticator app from the system they leave, 128 to 512 bits) becomes a
/// confirmed authenticator app, sealed under the server secret; the user keeps signing in with the
/// codes they know and can make recovery codes.
/// Existing identifiers are skipped, never overwritten; a bad line is reported and skipped, never
/// imported half-way. Argon2id and bcrypt hashes are taken as they are (bcrypt is upgraded to Argon2id
/// at the user's next sign-in); plaintext passwords are hashed here, on the hashing pool.
public struct UserImport: Sendable {
    let persistence: any Persistence
    let hasher: PasswordHasher
    let clock: any WallClock
    /// Seals imported TOTP secrets; without it a line with one is refused.
    let secret: ServerSecret?

    public init(persistence: any Persistence, hasher: PasswordHasher, clock: any WallClock, secret: ServerSecret? = nil) {
        self.persistence = persistence
        self.hasher = hasher
        self.clock = clock
        self.secret = secret
    }

    struct Line: Codable {
        var email: String?
        var emailVerified: Bool?
        var phone: String?
        var phoneVerified: Bool?
        var password: String?
        var passwordHash: String?
        var profile: Profile?
        var totpSecret: String?
        var username: String?
        /// When the account was made in the system it comes from (ISO 8601).
        var createdAt: Date?
        /// Provider identities (social subjects) that keep signing in to this account.
        var identities: [Identity]?
        var appMetadata: [String: JSONValue]?

        init() {}

        struct Identity: Codable, Sendable {
            var provider: String
            var subject: String
            var email: String?
        }

        enum CodingKeys: String, CodingKey {
            case email, phone, password, profile, username, identities
            case emailVerified = "email_verified"
            case phoneVerified = "phone_verified"
            case passwordHash = "password_hash"
            case totpSecret = "totp_secret"
            case createdAt = "created_at"
            case appMetadata = "app_metadata"
        }
    }

    /// What a batch did. `rejected` holds line numbers with the reason.
    public struct Result: Sendable, Equatable {
        public var imported = 0
        public var existing = 0
        public var rejected: [Rejection] = []

        public init() {}

        public mutating func add(_ other: Result) {
            imported += other.imported
            existing += other.existing
            rejected += other.rejected
        }
    }

    public struct Rejection: Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }

        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// Imports one batch of numbered lines in one transaction.
    /// `dryRun`: every check, nothing written (plaintext passwords are not hashed): `imported` counts
    /// the users that would be, `existing` those whose address, phone or username is taken.
    public func importBatch(_ lines: [(number: Int, text: Substring)], dryRun: Bool = false) async throws -> Result {
        var result = Result()
        var ready: [(Prepared, String?)] = []
        // Plaintext passwords hash in parallel on the pool; everything else is checked here.
        try await withThrowingTaskGroup(of: (Int, Prepared, String?)?.self) { group in
            for (position, (number, text)) in lines.enumerated() {
                let prepared: (Prepared, HashSource)
                do {
                    prepared = try prepare(text)
                } catch let rejection as RejectedLine {
                    result.rejected.append(Rejection(line: number, reason: rejection.reason))
                    continue
                }
                let (user, source) = prepared
                switch source {
                case .none: group.addTask { (position, user, nil) }
                case .stored(let hash): group.addTask { (position, user, hash) }
                case .plaintext(let password):
                    if dryRun {
                        group.addTask { (position, user, nil) }
                    } else {
                        group.addTask { [hasher] in (position, user, try await hasher.hash(password)) }
                    }
                }
            }
            var byPosition: [(Int, Prepared, String?)] = []
            for try await item in group { if let item { byPosition.append(item) } }
            ready = byPosition.sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) }
        }
        let now = clock.now()
        let rows = ready
        if dryRun {
            let taken = try await persistence.read { stores in
                var taken = 0
                for (prepared, _) in rows {
                    let user = prepared.user
                    var found = false
                    if let email = user.email { found = try await stores.users.find(email: email) != nil }
                    if !found, let phone = user.phone { found = try await stores.users.find(phone: phone) != nil }
                    if !found, let username = user.username { found = try await stores.users.find(username: username) != nil }
                    if found { taken += 1 }
                }
                return taken
            }
            result.existing = taken
            result.imported = rows.count - taken
            return result
        }
        let (imported, existing) = try await persistence.transaction { stores -> (Int, Int) in
            var imported = 0
            var existing = 0
            for (prepared, hash) in rows {
                let user = prepared.user
                // A provider identity already linked to an account makes this one that account's: kept,
                // never a second owner (looked up first: a failed insert would end a PostgreSQL transaction).
                var linked = false
                for identity in prepared.identities where !linked {
                    linked = try await stores.credentials.find(type: .oidc, identifier: identity.provider + ":" + identity.subject) != nil
                }
                if linked {
                    existing += 1
                    continue
                }
                do {
                    try await stores.users.insert(user)
                } catch StoreError.conflict {
                    existing += 1
                    continue
                }
                if let hash {
                    try await stores.credentials.insert(try PasswordStrategy.credential(for: user, hash: hash, now: now))
                }
                for identity in prepared.identities {
                    let config = try CredentialRecord.encodeConfig(
                        FederatedIdentity(provider: identity.provider, subject: identity.subject, email: identity.email))
                    try await stores.credentials.insert(
                        CredentialRecord(
                            userID: user.id, type: .oidc, identifiers: [identity.provider + ":" + identity.subject], config: config,
                            createdAt: now))
                }
                if let sealed = prepared.sealedTOTP {
                    let config = TOTPFactor.Config(sealedSecret: sealed, confirmed: true, lastStep: nil)
                    try await stores.credentials.insert(
                        CredentialRecord(
                            userID: user.id, type: .totp, identifiers: ["totp:" + UUID().uuidString.lowercased()],
                            config: try CredentialRecord.encodeConfig(config), createdAt: now))
                }
                imported += 1
            }
            return (imported, existing)
        }
        result.imported = imported
        result.existing = existing
        return result
    }

    enum HashSource {
        case none
        case stored(String)
        case plaintext(String)
    }

    struct RejectedLine: Error {
        var reason: String
    }

    /// A line's user, and its authenticator app's secret sealed, when it brings one.
    struct Prepared: Sendable {
        var user: UserRecord
        var sealedTOTP: String?
        var identities: [Line.Identity] = []
    }

    /// `created_at` in ISO 8601, with or without fractional seconds.
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = ISO8601.parse(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not ISO 8601"))
            }
            return date
        }
        return decoder
    }()

    func prepare(_ text: Substring) throws -> (Prepared, HashSource) {
        let line: Line
        do {
            line = try Self.decoder.decode(Line.self, from: Data(text.utf8))
        } catch {
            throw RejectedLine(reason: "not a JSON object of the import format")
        }
        var email: String?
        if let raw = line.email {
            let normalized = EmailAddress.normalize(raw)
            guard EmailAddress.isValid(normalized) else { throw RejectedLine(reason: "email is not a valid address") }
            email = normalized
        }
        var phone: String?
        if let raw = line.phone {
            let normalized = PhoneNumber.normalize(raw)
            guard PhoneNumber.isValid(normalized) else { throw RejectedLine(reason: "phone is not in E.164 form") }
            phone = normalized
        }
        var username: String?
        if let raw = line.username {
            var check = ValidationResult()
            username = Username.validate(raw, into: &check)
            guard check.isValid, username != nil else { throw RejectedLine(reason: "username is not a valid username") }
        }
        guard email != nil || phone != nil || username != nil else {
            throw RejectedLine(reason: "needs an email, a phone or a username")
        }
        let identities = line.identities ?? []
        guard identities.count <= 16,
            identities.allSatisfy({ SocialProvider.isValidID($0.provider) && !$0.subject.isEmpty && $0.subject.utf8.count <= 255 })
        else { throw RejectedLine(reason: "identities need a provider id and a subject (at most 16)") }
        let source: HashSource
        switch (line.password, line.passwordHash) {
        case (.some, .some):
            throw RejectedLine(reason: "give password or password_hash, not both")
        case (.some(let password), nil):
            guard !password.isEmpty, password.utf8.count <= PasswordPolicy().maxBytes else {
                throw RejectedLine(reason: "password is empty or too long")
            }
            source = .plaintext(password)
        case (nil, .some(let hash)):
            guard hasher.accepts(hash) else {
                throw RejectedLine(
                    reason:
                        "password_hash is not a form this server verifies (Argon2, bcrypt, PBKDF2, scrypt, Firebase scrypt), or costs more than its bounds"
                )
            }
            source = .stored(hash)
        case (nil, nil):
            source = .none
        }
        var sealedTOTP: String?
        if let raw = line.totpSecret {
            guard let key = Base32.decode(raw.uppercased().filter { !$0.isWhitespace && $0 != "=" }), (16...64).contains(key.count) else {
                throw RejectedLine(reason: "totp_secret must be base32 of 16 to 64 bytes")
            }
            guard let secret else { throw RejectedLine(reason: "totp_secret needs the server secret to seal it") }
            do {
                sealedTOTP = try secret.seal(key)
            } catch {
                throw RejectedLine(reason: "totp_secret could not be sealed")
            }
        }
        let now = clock.now()
        // A creation time from the future is the exporter's clock or a typo: the import's own time then.
        let created = line.createdAt.flatMap { $0 <= now ? $0 : nil } ?? now
        let user = UserRecord(
            email: email, emailVerified: line.emailVerified ?? false, phone: phone, phoneVerified: line.phoneVerified ?? false,
            profile: line.profile ?? Profile(), appMetadata: line.appMetadata, createdAt: created, updatedAt: now, username: username)
        return (Prepared(user: user, sealedTOTP: sealedTOTP, identities: identities), source)
    }
}
