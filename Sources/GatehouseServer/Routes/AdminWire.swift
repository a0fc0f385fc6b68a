import Foundation
import GatehouseAPI
import GatehouseCore

// The admin API's bodies. Server-only: apps never see them, so they stay out of GatehouseAPI.

struct AdminUserCreate: Decodable {
    var email: String?
    var phone: String?
    var password: String?
    var emailVerified: Bool?
    var phoneVerified: Bool?
    var profile: Profile?
    var appMetadata: [String: JSONValue]?

    enum CodingKeys: String, CodingKey {
        case email, phone, password, profile
        case emailVerified = "email_verified", phoneVerified = "phone_verified", appMetadata = "app_metadata"
    }
}

struct AdminUserUpdate: Decodable {
    var email: String?
    var phone: String?
    var emailVerified: Bool?
    var phoneVerified: Bool?
    var profile: Profile?
    var appMetadata: [String: JSONValue]?

    enum CodingKeys: String, CodingKey {
        case email, phone, profile
        case emailVerified = "email_verified", phoneVerified = "phone_verified", appMetadata = "app_metadata"
    }
}

struct AdminPasswordReset: Decodable {
    var clientId: String?
    enum CodingKeys: String, CodingKey { case clientId = "client_id" }
}

struct AdminUserPage: Encodable {
    var users: [User]
    var nextCursor: String?
    enum CodingKeys: String, CodingKey { case users, nextCursor = "next_cursor" }
}

struct AdminSessionList: Encodable {
    var sessions: [UserExport.Session]
}

struct AdminSignOut: Encodable {
    var revokedSessions: Int
    enum CodingKeys: String, CodingKey { case revokedSessions = "revoked_sessions" }
}

struct AdminFactorReset: Encodable {
    var removedFactors: Int
    enum CodingKeys: String, CodingKey { case removedFactors = "removed_factors" }
}

struct AdminClientCreate: Decodable {
    var clientId: String?
    var name: String
    var type: ClientRecord.Kind?
    var redirectUris: [String]?
    var scopes: [String]?
    var settings: [String: String]?

    enum CodingKeys: String, CodingKey {
        case name, type, scopes, settings
        case clientId = "client_id", redirectUris = "redirect_uris"
    }
}

struct AdminClientUpdate: Decodable {
    var name: String?
    var redirectUris: [String]?
    var scopes: [String]?
    var settings: [String: String]?

    enum CodingKeys: String, CodingKey {
        case name, scopes, settings
        case redirectUris = "redirect_uris"
    }
}

struct AdminClientList: Encodable {
    var clients: [ClientView]
}

struct AdminKey: Encodable {
    var kid: String
    var algorithm: String
    var current: Bool
    var createdAt: Date
    var retiredAt: Date?
    var publishUntil: Date?

    enum CodingKeys: String, CodingKey {
        case kid, algorithm, current
        case createdAt = "created_at", retiredAt = "retired_at", publishUntil = "publish_until"
    }
}

struct AdminRegistrationTokenRequest: Decodable {
    /// Seconds the token is valid for (60 s to 30 days).
    var ttl: Int?
}

struct AdminRegistrationToken: Encodable {
    var token: String
    var expiresAt: Date
    enum CodingKeys: String, CodingKey { case token, expiresAt = "expires_at" }
}

struct AdminKeyList: Encodable {
    var keys: [AdminKey]
}

struct AdminKeyRotated: Encodable {
    /// The first new key, as before there was one key per algorithm.
    var kid: String
    /// The new current key of each algorithm.
    var kids: [String]
}

struct AdminKeyRevoked: Encodable {
    var kid: String
    /// Whether it was the current key, so a new one was made first.
    var replaced: Bool
}

struct AdminAuditPage: Encodable {
    var events: [UserExport.Event]
    var nextCursor: String?
    enum CodingKeys: String, CodingKey { case events, nextCursor = "next_cursor" }
}

/// The opaque cursor of a page: the last row's time (milliseconds) and id, base64url.
enum AdminCursor {
    static func encode(_ at: Date, _ id: UUID) -> String {
        Base64URL.encode(Array("\(Int((at.timeIntervalSince1970 * 1000).rounded())).\(id.uuidString.lowercased())".utf8))
    }

    static func decode(_ text: String) throws -> (Date, UUID) {
        guard text.utf8.count <= 200, let bytes = Base64URL.decode(text) else { throw invalid }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let millis = Int(parts[0]), let id = UUID(uuidString: String(parts[1])) else { throw invalid }
        return (Date(timeIntervalSince1970: Double(millis) / 1000), id)
    }

    static let invalid = GatehouseError.badRequest("The cursor is not one this API gave.")
}
