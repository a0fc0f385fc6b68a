import Foundation
import GatehouseAPI

/// The user exports of the systems teams move from, read into the import's own JSON Lines
/// (``UserImport``): one entry per user, in the export's order, a user the converter cannot take
/// being a rejection with its reason. Hashes are rewritten into the forms ``ForeignPasswordHash``
/// verifies; nothing is hashed or verified here.
public enum ExportFormat: String, CaseIterable, Sendable {
    /// The import's own format (streamed line by line, not converted).
    case jsonl
    /// `firebase auth:export users.json --format=json`: `{"users": [...]}`, hashes in Firebase's
    /// modified scrypt, whose project parameters (``FirebaseHashConfig``) come from the console.
    case firebase
    /// Auth0's user export (NDJSON or a JSON array), with `passwordHash` (bcrypt) from its password
    /// export merged in.
    case auth0
    /// Supabase's `auth.users` rows as JSON (NDJSON or an array), `encrypted_password` in bcrypt.
    case supabase
    /// A Keycloak realm or users export (`{"users": [...]}`), PBKDF2 or Argon2 credentials.
    case keycloak
    /// Django's `manage.py dumpdata auth.user` (a JSON array), `pbkdf2_sha256$…` passwords.
    case django

    /// Firebase's project-wide hash parameters (Authentication → Users → Password hash parameters).
    public struct FirebaseHashConfig: Sendable {
        public var signerKey: String
        public var saltSeparator: String
        public var rounds: Int
        public var memoryCost: Int

        public init(signerKey: String, saltSeparator: String, rounds: Int, memoryCost: Int) {
            self.signerKey = signerKey
            self.saltSeparator = saltSeparator
            self.rounds = rounds
            self.memoryCost = memoryCost
        }
    }

    public enum Converted: Sendable, Equatable {
        case line(String)
        case rejected(String)
    }

    public struct FormatError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Converts a whole export.
    public func convert(_ data: Data, firebase: FirebaseHashConfig? = nil) throws -> [Converted] {
        let users = try records(data)
        return users.map { user in
            guard case .object(let fields) = user else { return .rejected("not a JSON object") }
            do {
                var line = try convert(fields, firebase: firebase)
                if line.profile == Profile() { line.profile = nil }
                return .line(String(decoding: try Self.encoder.encode(line), as: UTF8.self))
            } catch let error as FormatError {
                return .rejected(error.description)
            } catch {
                return .rejected("could not be converted")
            }
        }
    }

    /// The export's user records, whatever envelope it has.
    private func records(_ data: Data) throws -> [JSONValue] {
        let text = String(decoding: data, as: UTF8.self)
        if let whole = try? JSONDecoder().decode(JSONValue.self, from: data) {
            switch whole {
            case .array(let items): return items
            case .object(let fields):
                if case .array(let users)? = fields["users"] { return users }
                // One user alone (an NDJSON file of one line).
                return [whole]
            default: throw FormatError(description: "the export is neither a JSON array nor an object with users")
            }
        }
        // NDJSON (Auth0, Supabase): one object per line.
        return try text.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }.map { line in
            guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else {
                throw FormatError(description: "a line of the export is not JSON")
            }
            return value
        }
    }

    private func convert(_ u: [String: JSONValue], firebase: FirebaseHashConfig?) throws -> UserImport.Line {
        var line = UserImport.Line()
        var profile = Profile()
        switch self {
        case .jsonl:
            throw FormatError(description: "JSON Lines are imported as they are")
        case .firebase:
            line.email = u.string("email")
            line.emailVerified = u.bool("emailVerified")
            line.phone = u.string("phoneNumber")
            line.phoneVerified = line.phone == nil ? nil : true
            profile.name = u.string("displayName")
            profile.picture = u.string("photoUrl")
            line.createdAt = u.milliseconds("createdAt")
            if let hash = u.string("passwordHash"), let salt = u.string("salt") {
                guard let firebase else {
                    throw FormatError(description: "Firebase password hashes need the project's hash parameters (--firebase-signer-key …)")
                }
                line.passwordHash =
                    "$firebase-scrypt$r=\(firebase.rounds),m=\(firebase.memoryCost)$\(salt)$\(firebase.saltSeparator)$\(firebase.signerKey)$\(hash)"
            }
            line.identities = u.array("providerUserInfo").compactMap { info in
                guard let provider = info.string("providerId").flatMap(Self.firebaseProvider), let subject = info.string("rawId") else {
                    return nil
                }
                return .init(provider: provider, subject: subject, email: info.string("email"))
            }
            if let custom = u.string("customAttributes"),
                case .object(let claims)? = try? JSONDecoder().decode(
                    JSONValue.self, from: Data(custom.utf8))
            {
                line.appMetadata = claims
            }
        case .auth0:
            line.email = u.string("email")
            line.emailVerified = u.bool("email_verified")
            line.phone = u.string("phone_number")
            line.phoneVerified = u.bool("phone_verified")
            line.username = u.string("username")
            profile.name = u.string("name")
            profile.givenName = u.string("given_name")
            profile.familyName = u.string("family_name")
            profile.nickname = u.string("nickname")
            profile.picture = u.string("picture")
            if case .object(let metadata)? = u["user_metadata"] { profile.metadata = metadata }
            if case .object(let metadata)? = u["app_metadata"] { line.appMetadata = metadata }
            line.createdAt = u.string("created_at").flatMap(ISO8601.parse)
            line.passwordHash = u.string("passwordHash") ?? u.string("password_hash")
            line.identities = u.array("identities").compactMap { identity in
                let numeric = identity.number("user_id").map { String(Int64($0)) }
                guard identity.bool("isSocial") == true, let provider = identity.string("provider").map(Self.auth0Provider),
                    let subject = identity.string("user_id") ?? numeric
                else { return nil }
                return .init(provider: provider, subject: subject, email: nil)
            }
        case .supabase:
            line.email = u.string("email")
            line.emailVerified = u.string("email_confirmed_at") != nil
            line.phone = u.string("phone").flatMap { $0.isEmpty ? nil : ($0.hasPrefix("+") ? $0 : "+" + $0) }
            line.phoneVerified = u.string("phone_confirmed_at") != nil
            line.createdAt = u.string("created_at").flatMap(ISO8601.parse)
            line.passwordHash = u.string("encrypted_password").flatMap { $0.isEmpty ? nil : $0 }
            if case .object(let metadata)? = u["raw_user_meta_data"], !metadata.isEmpty { profile.metadata = metadata }
            if case .object(var metadata)? = u["raw_app_meta_data"] {
                // Supabase's own bookkeeping of which providers signed in, not the app's data.
                metadata["provider"] = nil
                metadata["providers"] = nil
                if !metadata.isEmpty { line.appMetadata = metadata }
            }
        case .keycloak:
            line.username = u.string("username")
            line.email = u.string("email")
            line.emailVerified = u.bool("emailVerified")
            profile.givenName = u.string("firstName")
            profile.familyName = u.string("lastName")
            line.createdAt = u.milliseconds("createdTimestamp")
            if case .object(let attributes)? = u["attributes"], !attributes.isEmpty { profile.metadata = attributes }
            if let credential = u.array("credentials").first(where: { $0.string("type") == "password" }) {
                line.passwordHash = try Self.keycloakHash(credential)
            }
            line.identities = u.array("federatedIdentities").compactMap { identity in
                guard let provider = identity.string("identityProvider"), let subject = identity.string("userId") else { return nil }
                return .init(provider: provider, subject: subject, email: nil)
            }
        case .django:
            let fields: [String: JSONValue]
            if case .object(let inner)? = u["fields"] { fields = inner } else { fields = u }
            if fields.bool("is_active") == false { throw FormatError(description: "the account is inactive in Django") }
            line.username = fields.string("username")
            line.email = fields.string("email").flatMap { $0.isEmpty ? nil : $0 }
            profile.givenName = fields.string("first_name").flatMap { $0.isEmpty ? nil : $0 }
            profile.familyName = fields.string("last_name").flatMap { $0.isEmpty ? nil : $0 }
            line.createdAt = fields.string("date_joined").flatMap(ISO8601.parse)
            line.passwordHash = try fields.string("password").flatMap(Self.djangoHash)
        }
        line.profile = profile
        return line
    }

    // MARK: - Hashes

    static func keycloakHash(_ credential: JSONValue) throws -> String {
        // Both are JSON documents inside strings in the export.
        func document(_ key: String) -> [String: JSONValue]? {
            guard let text = credential.string(key),
                case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            else { return nil }
            return fields
        }
        guard let secret = document("secretData"), let data = document("credentialData"), let value = secret.string("value"),
            let salt = secret.string("salt"), let algorithm = data.string("algorithm"), let iterations = data.number("hashIterations")
        else { throw FormatError(description: "the Keycloak password credential lacks its hash, salt or algorithm") }
        switch algorithm {
        case "pbkdf2-sha256", "pbkdf2-sha512", "pbkdf2":
            return "$\(algorithm)$i=\(Int(iterations))$\(salt)$\(value)"
        case "argon2":
            // Keycloak keeps Argon2's parameters as lists of strings.
            let extra: [String: JSONValue]
            if case .object(let fields)? = data["additionalParameters"] { extra = fields } else { extra = [:] }
            func parameter(_ key: String) -> String? { extra.array(key).first.flatMap { $0.stringValue } }
            guard let type = parameter("type"), ["id", "i", "d"].contains(type), parameter("version") ?? "1.3" == "1.3",
                let memory = parameter("memory"), let parallelism = parameter("parallelism")
            else { throw FormatError(description: "the Keycloak Argon2 credential lacks its parameters") }
            let unpadded = { (text: String) in text.replacingOccurrences(of: "=", with: "") }
            return "$argon2\(type)$v=19$m=\(memory),t=\(Int(iterations)),p=\(parallelism)$\(unpadded(salt))$\(unpadded(value))"
        default:
            throw FormatError(description: "Keycloak hash algorithm \(algorithm) is not one this server verifies")
        }
    }

    static func djangoHash(_ stored: String) throws -> String? {
        // `!…` marks an unusable password: the account signs in another way or resets it.
        if stored.isEmpty || stored.hasPrefix("!") { return nil }
        if stored.hasPrefix("pbkdf2_sha256$") || stored.hasPrefix("pbkdf2_sha1$") { return stored }
        if stored.hasPrefix("argon2$") { return String(stored.dropFirst("argon2".count)) }
        if stored.hasPrefix("bcrypt$") { return String(stored.dropFirst("bcrypt".count + 1)) }
        throw FormatError(description: "Django hasher \(stored.prefix { $0 != "$" }) is not one this server verifies")
    }

    // MARK: - Providers

    static func firebaseProvider(_ id: String) -> String? {
        switch id {
        case "password", "phone", "anonymous": return nil
        case "twitter.com": return "x"
        default:
            let name = id.hasSuffix(".com") ? String(id.dropLast(4)) : id
            return SocialProvider.isValidID(name) ? name : nil
        }
    }

    static func auth0Provider(_ id: String) -> String {
        switch id {
        case "google-oauth2": "google"
        case "twitter": "x"
        default: id
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}

extension Dictionary where Key == String, Value == JSONValue {
    fileprivate func string(_ key: String) -> String? { self[key]?.stringValue }
    fileprivate func bool(_ key: String) -> Bool? { if case .bool(let value)? = self[key] { value } else { nil } }
    fileprivate func number(_ key: String) -> Double? { if case .number(let value)? = self[key] { value } else { nil } }
    fileprivate func array(_ key: String) -> [JSONValue] { if case .array(let items)? = self[key] { items } else { [] } }
    /// Milliseconds since 1970, as a number or a string of digits (Firebase writes strings).
    fileprivate func milliseconds(_ key: String) -> Date? {
        let value = number(key) ?? string(key).flatMap(Double.init)
        return value.map { Date(timeIntervalSince1970: $0 / 1000) }
    }
}

extension JSONValue {
    fileprivate var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    fileprivate func string(_ key: String) -> String? { if case .object(let fields) = self { fields.string(key) } else { nil } }
    fileprivate func bool(_ key: String) -> Bool? { if case .object(let fields) = self { fields.bool(key) } else { nil } }
    fileprivate func number(_ key: String) -> Double? { if case .object(let fields) = self { fields.number(key) } else { nil } }
}
