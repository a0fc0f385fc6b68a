import Crypto
import Foundation
import GatehouseAPI

/// The OpenID Connect standard claims about a user (OIDC Core §5.1) that the granted scopes release
/// (§5.4): `profile` the names, pages, picture, birthdate, zone and locale; `email` the address;
/// `address` the postal address; `phone` the number. The `claims` request parameter (§5.5) may ask for
/// single claims besides. The same set goes into the ID token and the userinfo answer.
public struct UserClaims: Codable, Sendable, Equatable {
    public var email: String?
    public var emailVerified: Bool?
    public var name: String?
    public var givenName: String?
    public var familyName: String?
    public var middleName: String?
    public var nickname: String?
    public var preferredUsername: String?
    public var profile: String?
    public var picture: String?
    public var website: String?
    public var gender: String?
    public var birthdate: String?
    public var zoneinfo: String?
    public var locale: String?
    public var updatedAt: Int?
    public var phoneNumber: String?
    public var phoneNumberVerified: Bool?
    public var address: PostalAddress?

    /// The claims each scope releases (OIDC Core §5.4).
    public static let byScope: [String: [String]] = [
        "profile": [
            "name", "family_name", "given_name", "middle_name", "nickname", "preferred_username", "profile", "picture", "website",
            "gender", "birthdate", "zoneinfo", "locale", "updated_at",
        ],
        "email": ["email", "email_verified"],
        "address": ["address"],
        "phone": ["phone_number", "phone_number_verified"],
    ]

    /// Every claim Gatehouse can release about a user.
    public static let supported: Set<String> = Set(byScope.values.joined())

    public init() {}

    /// The claims of `scopes`, and the single claims in `requested` (from the `claims` parameter) whatever
    /// the scopes. A claim the user has no value for is left out.
    public init(user: UserRecord?, scopes: [String], requested: [String] = []) {
        guard let user else { return }
        var names = Set(requested).intersection(Self.supported)
        for scope in scopes { names.formUnion(Self.byScope[scope] ?? []) }
        guard !names.isEmpty else { return }
        let p = user.profile
        func pick<T>(_ claim: String, _ value: T?) -> T? { names.contains(claim) ? value : nil }
        if let email = user.email, names.contains("email") || names.contains("email_verified") {
            self.email = pick("email", email)
            emailVerified = pick("email_verified", user.emailVerified)
        }
        name = pick("name", p.name)
        givenName = pick("given_name", p.givenName)
        familyName = pick("family_name", p.familyName)
        middleName = pick("middle_name", p.middleName)
        nickname = pick("nickname", p.nickname)
        preferredUsername = pick("preferred_username", p.preferredUsername)
        profile = pick("profile", p.profileURL)
        picture = pick("picture", p.picture)
        website = pick("website", p.website)
        gender = pick("gender", p.gender)
        birthdate = pick("birthdate", p.birthdate)
        zoneinfo = pick("zoneinfo", p.zoneinfo)
        locale = pick("locale", p.locale)
        updatedAt = pick("updated_at", Int(user.updatedAt.timeIntervalSince1970))
        address = pick("address", p.address)
        if let phone = user.phone {
            phoneNumber = pick("phone_number", phone)
            phoneNumberVerified = pick("phone_number_verified", user.phoneVerified)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case email, name, nickname, profile, picture, website, gender, birthdate, zoneinfo, locale, address
        case emailVerified = "email_verified"
        case givenName = "given_name"
        case familyName = "family_name"
        case middleName = "middle_name"
        case preferredUsername = "preferred_username"
        case updatedAt = "updated_at"
        case phoneNumber = "phone_number"
        case phoneNumberVerified = "phone_number_verified"
    }

    /// `at_hash` / `c_hash` (OIDC Core §3.1.3.6, §3.3.2.11): the left half of the SHA-256 of the value,
    /// base64url; SHA-256 because both algorithms the ID token may be signed with (RS256, ES256) use it.
    public static func halfHash(_ value: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(value.utf8))).prefix(16))
    }
}
