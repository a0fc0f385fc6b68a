import Foundation

/// Profile fields a user (or an app on the user's behalf) may set.
public struct Profile: Codable, Hashable, Sendable {
    public var name: String?
    public var givenName: String?
    public var familyName: String?
    /// A calendar date, `YYYY-MM-DD`.
    public var birthdate: String?
    /// An https URL.
    public var picture: String?
    /// A BCP 47 language tag.
    public var locale: String?
    public var metadata: [String: JSONValue]?
    public var middleName: String?
    public var nickname: String?
    /// The name the user likes to be called by; not unique and not an identifier.
    public var preferredUsername: String?
    /// An https URL of the user's profile page (OpenID Connect's `profile` claim).
    public var profileURL: String?
    /// An https URL of the user's web page or blog.
    public var website: String?
    /// `female`, `male`, or another value the user chose.
    public var gender: String?
    /// An IANA time zone, such as `Europe/Oslo`.
    public var zoneinfo: String?
    /// The user's postal address (OpenID Connect Core §5.1.1).
    public var address: PostalAddress?

    public init(
        name: String? = nil, givenName: String? = nil, familyName: String? = nil, birthdate: String? = nil,
        picture: String? = nil, locale: String? = nil, metadata: [String: JSONValue]? = nil, middleName: String? = nil,
        nickname: String? = nil, preferredUsername: String? = nil, profileURL: String? = nil, website: String? = nil,
        gender: String? = nil, zoneinfo: String? = nil, address: PostalAddress? = nil
    ) {
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.birthdate = birthdate
        self.picture = picture
        self.locale = locale
        self.metadata = metadata
        self.middleName = middleName
        self.nickname = nickname
        self.preferredUsername = preferredUsername
        self.profileURL = profileURL
        self.website = website
        self.gender = gender
        self.zoneinfo = zoneinfo
        self.address = address
    }

    private enum CodingKeys: String, CodingKey {
        case name, birthdate, picture, locale, metadata, nickname, website, gender, zoneinfo, address
        case givenName = "given_name"
        case familyName = "family_name"
        case middleName = "middle_name"
        case preferredUsername = "preferred_username"
        case profileURL = "profile"
    }
}

/// A postal address as OpenID Connect's `address` claim carries it (Core §5.1.1).
public struct PostalAddress: Codable, Hashable, Sendable {
    /// The whole address as it is printed on a letter, lines separated by newlines.
    public var formatted: String?
    /// Street, house number, apartment; lines separated by newlines.
    public var streetAddress: String?
    /// City or locality.
    public var locality: String?
    /// State, province, prefecture or region.
    public var region: String?
    public var postalCode: String?
    /// The country, by name or ISO 3166-1 code.
    public var country: String?

    public init(
        formatted: String? = nil, streetAddress: String? = nil, locality: String? = nil, region: String? = nil, postalCode: String? = nil,
        country: String? = nil
    ) {
        self.formatted = formatted
        self.streetAddress = streetAddress
        self.locality = locality
        self.region = region
        self.postalCode = postalCode
        self.country = country
    }

    private enum CodingKeys: String, CodingKey {
        case formatted, locality, region, country
        case streetAddress = "street_address"
        case postalCode = "postal_code"
    }
}

/// Whether a user may sign in.
public struct UserState: RawRepresentable, Codable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let active = UserState(rawValue: "active")
    public static let disabled = UserState(rawValue: "disabled")
}

/// A user as the API shows it: never with a secret.
public struct User: Codable, Hashable, Sendable {
    public var id: UUID
    public var email: String?
    public var emailVerified: Bool
    public var phone: String?
    public var phoneVerified: Bool
    /// The user's username, normalized (case folded, NFKC), when the client that made the account
    /// uses usernames.
    public var username: String?
    public var hasPassword: Bool
    public var profile: Profile
    public var state: UserState
    public var createdAt: Date
    public var lastLoginAt: Date?
    /// In token responses: whether the user accepted the client's current terms.
    public var agreementsUpToDate: Bool?
    /// In token responses: the client's required profile fields the user has not filled in.
    public var missingRequiredFields: [String]?
    /// What the server, its hooks and operators keep about the user (roles, plan, …); the app reads
    /// it but cannot change it. The app's own data goes in ``Profile/metadata``.
    public var appMetadata: [String: JSONValue]?
    /// In `GET /v1/me`: the social provider identities linked to the account.
    public var identities: [LinkedIdentity]?
    /// `true` for an anonymous account (no way to sign in again until it is upgraded); absent for
    /// every other.
    public var isAnonymous: Bool?

    public init(
        id: UUID, email: String?, emailVerified: Bool, phone: String?, phoneVerified: Bool, hasPassword: Bool,
        profile: Profile, state: UserState, createdAt: Date, lastLoginAt: Date?
    ) {
        self.id = id
        self.email = email
        self.emailVerified = emailVerified
        self.phone = phone
        self.phoneVerified = phoneVerified
        self.hasPassword = hasPassword
        self.profile = profile
        self.state = state
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.uuidString.lowercased(), forKey: .id)  // the contract's lowercase form
        try c.encodeIfPresent(email, forKey: .email)
        try c.encode(emailVerified, forKey: .emailVerified)
        try c.encodeIfPresent(phone, forKey: .phone)
        try c.encode(phoneVerified, forKey: .phoneVerified)
        try c.encodeIfPresent(username, forKey: .username)
        try c.encode(hasPassword, forKey: .hasPassword)
        try c.encode(profile, forKey: .profile)
        try c.encode(state, forKey: .state)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encodeIfPresent(lastLoginAt, forKey: .lastLoginAt)
        try c.encodeIfPresent(agreementsUpToDate, forKey: .agreementsUpToDate)
        try c.encodeIfPresent(missingRequiredFields, forKey: .missingRequiredFields)
        try c.encodeIfPresent(appMetadata, forKey: .appMetadata)
        try c.encodeIfPresent(identities, forKey: .identities)
        if isAnonymous == true { try c.encode(true, forKey: .isAnonymous) }
    }

    private enum CodingKeys: String, CodingKey {
        case id, email, phone, profile, state, identities, username
        case emailVerified = "email_verified"
        case phoneVerified = "phone_verified"
        case hasPassword = "has_password"
        case createdAt = "created_at"
        case lastLoginAt = "last_login_at"
        case agreementsUpToDate = "agreements_up_to_date"
        case missingRequiredFields = "missing_required_fields"
        case appMetadata = "app_metadata"
        case isAnonymous = "is_anonymous"
    }
}

extension Profile {
    /// The profile's own fields by their wire names, for forms and settings that name fields
    /// (`required_fields`, sign-up fields).
    public static let fieldNames = ["name", "given_name", "family_name", "birthdate", "picture", "locale"]

    /// The field with the wire name `name`; nil (and setting does nothing) for a name that is not one
    /// of ``fieldNames``.
    public subscript(field name: String) -> String? {
        get {
            switch name {
            case "name": self.name
            case "given_name": givenName
            case "family_name": familyName
            case "birthdate": birthdate
            case "picture": picture
            case "locale": locale
            default: nil
            }
        }
        set {
            switch name {
            case "name": self.name = newValue
            case "given_name": givenName = newValue
            case "family_name": familyName = newValue
            case "birthdate": birthdate = newValue
            case "picture": picture = newValue
            case "locale": locale = newValue
            default: break
            }
        }
    }
}
