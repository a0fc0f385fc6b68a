import Foundation
import GatehouseAPI
import GatehouseCore
import NIOCore
import Testing

@testable import GatehouseServer

/// The hot answers written by hand (``JSONBodyWriter``) hold to their `Encodable` conformances byte
/// for byte: a field one of them forgot, a key out of order or a string escaped differently fails here.
@Suite("JSON body writer")
struct JSONBodyWriterTests {
    private static let encoder = WireCoding.encoder()

    /// Every stored optional of `value`, and of the hand-written values inside it, that is nil: a
    /// fixture with none leaves no field of these types untested.
    private static func nilFields(_ value: Any, path: String = "") -> [String] {
        Mirror(reflecting: value).children.flatMap { child -> [String] in
            let name = path + (child.label ?? "?")
            let mirror = Mirror(reflecting: child.value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return [name] }
                return wrapped is any JSONBodyEncodable ? nilFields(wrapped, path: name + ".") : []
            }
            return child.value is any JSONBodyEncodable ? nilFields(child.value, path: name + ".") : []
        }
    }

    private static func expectSame<T: JSONBodyEncodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let written = try JSONBodyWriter.body(value)
        let encoded = try encoder.encode(value)
        #expect(
            String(buffer: written) == String(decoding: encoded, as: UTF8.self), sourceLocation: sourceLocation)
    }

    /// Quotes, backslashes, every control character, slashes, DEL and characters beyond ASCII.
    private static let awkward = "a\"b\\c/d" + String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self) + "\u{7F}é😀\u{2028}"

    private static func fullUser() -> User {
        var profile = Profile(
            name: "Ada \(awkward)", givenName: "Ada", familyName: "Lovelace", birthdate: "1815-12-10",
            picture: "https://example.com/a.png", locale: "en-GB",
            metadata: ["theme": .string("dark"), "n": .number(2.5), "tags": .array([.bool(true), .null])],
            middleName: "King", nickname: "Countess", preferredUsername: "ada", profileURL: "https://example.com/ada",
            website: "https://ada.example", gender: "female", zoneinfo: "Europe/London",
            address: PostalAddress(
                formatted: "12 St James's Square\nLondon", streetAddress: "12 St James's Square", locality: "London",
                region: "Westminster", postalCode: "SW1Y 4JH", country: "GB"))
        profile.metadata?["nested"] = .object(["b": .number(1), "a": .string("x")])
        var user = User(
            id: UUID(), email: "ada@example.com", emailVerified: true, phone: "+447700900123", phoneVerified: false,
            hasPassword: true, profile: profile, state: .active, createdAt: Date(timeIntervalSince1970: 1_764_300_000.987),
            lastLoginAt: Date(timeIntervalSince1970: 1_764_300_123.5))
        user.username = "ada"
        user.agreementsUpToDate = false
        user.missingRequiredFields = ["birthdate", awkward]
        user.appMetadata = ["roles": .array([.string("admin")]), "plan": .string("pro")]
        user.identities = [
            LinkedIdentity(
                id: "l1", provider: "github", subject: "42", email: "ada@example.com",
                linkedAt: Date(timeIntervalSince1970: 1_700_000_000), profile: ["login": .string("ada")])
        ]
        user.isAnonymous = true
        return user
    }

    @Test("JB-1: token, user and introspection answers with every field set are the encoder's bytes")
    func everyFieldAsTheEncoder() throws {
        let user = Self.fullUser()
        #expect(Self.nilFields(user).isEmpty, "the fixture leaves fields unset: \(Self.nilFields(user))")
        try Self.expectSame(user)

        var tokens = TokenResponse(
            accessToken: "eyJ.a.b", tokenType: "DPoP", expiresIn: 900, refreshToken: "ghr_x/y+z", scope: "openid email",
            idToken: "eyJ.c.d", user: user, isNew: true, recoveryCodes: ["abcd-efgh", "ijkl-mnop"])
        tokens.issuedTokenType = "urn:ietf:params:oauth:token-type:access_token"
        #expect(Self.nilFields(tokens).isEmpty, "the fixture leaves fields unset: \(Self.nilFields(tokens))")
        try Self.expectSame(tokens)

        var answer = IntrospectionResponse(active: true)
        answer.scope = "openid"
        answer.clientId = "bench"
        answer.sub = UUID().uuidString.lowercased()
        answer.exp = 1_764_300_900
        answer.iat = -5
        answer.iss = "https://id.example.com/"
        answer.aud = Audience(["https://api.example.com", "https://other.example.com"])
        answer.jti = Self.awkward
        answer.sid = UUID().uuidString.lowercased()
        answer.tokenType = "DPoP"
        answer.cnf = Confirmation(jkt: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        answer.act = ["sub": "admin-client", "client_id": "x"]
        #expect(Self.nilFields(answer).isEmpty, "the fixture leaves fields unset: \(Self.nilFields(answer))")
        try Self.expectSame(answer)
    }

    @Test("JB-2: absent fields, one audience or none, false flags, and dates before 1970 and after 9999 as the encoder writes them")
    func edgesAsTheEncoder() throws {
        try Self.expectSame(IntrospectionResponse(active: false))
        var one = IntrospectionResponse(active: true)
        one.aud = "https://api.example.com"
        try Self.expectSame(one)
        one.aud = Audience([])
        try Self.expectSame(one)

        try Self.expectSame(TokenResponse(accessToken: "a", expiresIn: 0, refreshToken: nil, scope: nil))
        try Self.expectSame(
            TokenResponse(accessToken: "", expiresIn: -1, refreshToken: "", scope: "", isNew: false, recoveryCodes: []))

        for seconds in [0, -1.5, 951_782_400.999, 253_402_300_799, 253_402_300_800, -62_135_596_801] {
            var user = User(
                id: UUID(), email: nil, emailVerified: false, phone: nil, phoneVerified: false, hasPassword: false,
                profile: Profile(), state: UserState(rawValue: "disabled"), createdAt: Date(timeIntervalSince1970: seconds),
                lastLoginAt: nil)
            user.isAnonymous = false
            try Self.expectSame(user)
        }
    }

    @Test("JB-3: an access token's claims with every field set, and an anonymous one's for one audience, are the encoder's bytes")
    func accessTokenClaimsAsTheEncoder() throws {
        var claims = AccessTokenClaims(
            iss: "https://id.example.com", sub: UUID().uuidString.lowercased(),
            aud: Audience(["https://id.example.com", "https://api.example.com/v1"]), exp: 1_764_300_900, iat: 1_764_300_000,
            jti: Self.awkward, clientID: "bench", scope: "openid email offline_access", sid: UUID().uuidString.lowercased(),
            amr: ["pwd", "otp"])
        claims.acr = "2"
        claims.authTime = 1_764_299_000
        claims.cnf = Confirmation(jkt: "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        claims.act = ["sub": "admin-client"]
        #expect(Self.nilFields(claims).isEmpty, "the fixture leaves fields unset: \(Self.nilFields(claims))")
        try Self.expectSame(claims)

        let anonymous = AccessTokenClaims(
            iss: "http://127.0.0.1:8080", sub: "u", aud: "http://127.0.0.1:8080", exp: 2, iat: 1, jti: "j", clientID: "c",
            scope: "", sid: "s", amr: [AuthenticationMethod.anonymous])
        try Self.expectSame(anonymous)
    }
}
