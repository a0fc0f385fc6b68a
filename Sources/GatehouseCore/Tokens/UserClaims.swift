import Crypto
import Foundation
import GatehouseAPI

/// The OpenID Connect standard claims about a user (OIDC Core §5.1) that the granted scopes release
/// (§5.4): `profile` the name, picture, birthdate, locale; `email` the address; `phone` the number.
/// The same set goes into the ID token and the userinfo answer.
public struct UserClaims: Codable, Sendable, Equatable {
    public var email: String?
    public var emailVerified: Bool?
    public var name: String?
    public var givenName: String?
    public var familyName: String?
    public var birthdate: String?
    public var picture: String?
    public var locale: String?
    public var updatedAt: Int?
    public var phoneNumber: String?
    public var phoneNumberVerified: Bool?

    public init() {}

    public init(user: UserRecord?, scopes: [String]) {
        guard let user else { return }
        if scopes.contains("email"), let email = user.email {
            self.email = email
            emailVerified = user.emailVerified
        }
        if scopes.contains("profile") {
            let p = user.profile
            name = p.name
            givenName = p.givenName
            familyName = p.familyName
            birthdate = p.birthdate
            picture = p.picture
            locale = p.locale
            updatedAt = Int(user.updatedAt.timeIntervalSince1970)
        }
        if scopes.contains("phone"), let phone = user.phone {
            phoneNumber = phone
            phoneNumberVerified = user.phoneVerified
        }
    }

    private enum CodingKeys: String, CodingKey {
        case email, name, birthdate, picture, locale
        case emailVerified = "email_verified"
        case givenName = "given_name"
        case familyName = "family_name"
        case updatedAt = "updated_at"
        case phoneNumber = "phone_number"
        case phoneNumberVerified = "phone_number_verified"
    }

    /// `at_hash` / `c_hash` (OIDC Core §3.1.3.6, §3.3.2.11): the left half of the SHA-256 of the value,
    /// base64url; SHA-256 because the ID token is ES256.
    public static func halfHash(_ value: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(value.utf8))).prefix(16))
    }
}
