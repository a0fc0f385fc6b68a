import Foundation
import Argon2
import GatehouseAPI
@testable import GatehouseCore
import Testing

@Suite("Policies")
struct PolicyTests {
    @Test(
        "Password policy: length in characters, bound in bytes, not the email",
        arguments: [
            ("", "required"), ("123456789", "too_short"), ("1234567890", nil), ("ada@example.com", "same_as_email"),
            (String(repeating: "é", count: 513), "too_long"), (String(repeating: "a", count: 1024), nil),
        ] as [(String, String?)])
    func passwordPolicy(password: String, code: String?) {
        var result = ValidationResult()
        PasswordPolicy().validate(password, email: "Ada@example.com", into: &result)
        #expect(result.errors.first?.code.rawValue == code)
        #expect(result.errors.allSatisfy { $0.field == "password" })
    }

    @Test(
        "Email syntax",
        arguments: [
            ("a@b.co", true), ("first.last+tag@sub.example.org", true), ("no-at-sign", false), ("a@b", false),
            ("@b.co", false), ("a@.b.co", false), ("a@b..co", false), ("a b@c.co", false), ("a@b.co\n", false),
            ("<a@b.co>", false), (String(repeating: "a", count: 65) + "@b.co", false),
        ])
    func emailSyntax(email: String, valid: Bool) {
        #expect(EmailAddress.isValid(email) == valid)
    }

    @Test("Profile fields: real past dates, BCP 47 tags, https pictures and pages, IANA zones, lengths in code points, addresses")
    func profileValidation() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(ProfileValidator.isPastDate("2000-02-29", now: now))
        #expect(!ProfileValidator.isPastDate("2001-02-29", now: now))
        #expect(!ProfileValidator.isPastDate("2100-01-01", now: now))
        #expect(!ProfileValidator.isPastDate("20000-01-01", now: now))
        #expect(!ProfileValidator.isPastDate("2000-1-1", now: now))
        #expect(ProfileValidator.isLanguageTag("en"))
        #expect(ProfileValidator.isLanguageTag("nb-NO"))
        #expect(ProfileValidator.isLanguageTag("zh-Hant-TW"))
        #expect(!ProfileValidator.isLanguageTag("e"))
        #expect(!ProfileValidator.isLanguageTag("en_GB"))
        #expect(!ProfileValidator.isLanguageTag("en-"))
        #expect(ProfileValidator.isHTTPSURL("https://cdn.example.com/a.png"))
        #expect(!ProfileValidator.isHTTPSURL("http://cdn.example.com/a.png"))
        #expect(!ProfileValidator.isHTTPSURL("javascript:alert(1)"))
        var result = ValidationResult()
        ProfileValidator().validate(Profile(name: String(repeating: "x", count: 201), givenName: "A\u{0007}"), now: now, into: &result)
        #expect(result.errors.map(\.field) == ["profile.name", "profile.given_name"])
        // The OpenID Connect claims: lengths in code points (JSON Schema's count), not graphemes; https
        // pages; IANA zones; addresses with line breaks but no other control characters.
        var more = ValidationResult()
        let profile = Profile(
            middleName: String(repeating: "e\u{0301}", count: 101), nickname: "Buffy", profileURL: "http://example.com/b",
            website: "https://example.com", zoneinfo: "Mars/Olympus",
            address: PostalAddress(formatted: "1630 Revello Drive\nSunnydale", streetAddress: "1630\u{0007}", country: "USA"))
        ProfileValidator().validate(profile, now: now, into: &more)
        #expect(
            more.errors.map(\.field) == ["profile.middle_name", "profile.profile", "profile.zoneinfo", "profile.address.street_address"],
            "\(more.errors.map(\.field))")
        var fine = ValidationResult()
        ProfileValidator().validate(
            Profile(
                middleName: String(repeating: "e\u{0301}", count: 100), zoneinfo: "Europe/Oslo", address: PostalAddress(formatted: "A\nB")),
            now: now, into: &fine)
        #expect(fine.isValid)
    }

    @Test("Scopes granted are the requested ones the client allows; openid only on request")
    func scopeGrant() {
        let client = ClientRecord(id: "c", name: "c", kind: .public, createdAt: Date())
        #expect(SessionIssuer.grant(requested: nil, client: client) == ["profile", "email", "offline_access"])
        #expect(SessionIssuer.grant(requested: "openid email admin email", client: client) == ["openid", "email"])
    }

    @Test("Client settings parse, and unknown keys or bad values are refused")
    func clientSettings() throws {
        var settings = ClientSettings()
        try ClientSettingsParser.apply(
            ["email_verification=off", "methods=password,email_otp", "access_token_ttl=300", "terms_client_url=https://x.example/t"],
            to: &settings)
        #expect(settings.emailVerification == .off)
        #expect(settings.methods == ["password", "email_otp"])
        #expect(settings.accessTokenTTL == 300)
        for bad in ["nope=1", "email_verification=maybe", "access_token_ttl=5", "methods=carrier_pigeon", "novalue"] {
            #expect(throws: ClientAdminError.self) { try ClientSettingsParser.apply([bad], to: &settings) }
        }
    }

    @Test("Redirect URIs: https, loopback http, reverse-DNS app schemes; nothing else")
    func redirectURIs() throws {
        for ok in ["https://app.example.com/cb", "http://127.0.0.1:8000/cb", "com.example.app:/callback"] {
            try RedirectURIRule.validateRedirectURI(ok)
        }
        for bad in ["http://evil.example/cb", "javascript:alert(1)", "myapp:/cb", "https://a.example/cb#frag", "not a uri"] {
            #expect(throws: ClientAdminError.self, "\(bad)") { try RedirectURIRule.validateRedirectURI(bad) }
        }
    }
}

@Suite("Throttle keys")
struct ThrottleKeyTests {
    @Test(
        "IPv4 counts per address; IPv6 per /64",
        arguments: [
            ("203.0.113.7", "203.0.113.7"),
            ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
            ("2001:DB8:1:2::99", "2001:db8:1:2::/64"),
            ("2001:db8::1", "2001:db8:0:0::/64"),
            ("::1", "0:0:0:0::/64"),
        ])
    func addressBlocks(ip: String, block: String) {
        #expect(AddressBlock.of(ip) == block)
    }
}

@Suite("Dual-stack addresses")
struct MappedAddressTests {
    @Test("An IPv4-mapped IPv6 address counts as its IPv4 address")
    func mapped() {
        #expect(AddressBlock.of("::ffff:203.0.113.9") == "203.0.113.9")
        #expect(AddressBlock.of("::FFFF:cb00:7109") == "203.0.113.9")
        #expect(AddressBlock.of("0:0:0:0:0:ffff:cb00:7109") == "203.0.113.9")
        // Not mapped: an ordinary IPv6 address that merely contains ffff stays IPv6.
        #expect(AddressBlock.of("2001:db8::ffff:cb00:7109") == "2001:db8:0:0::/64")
    }
}

@Suite("Stored hash costs")
struct StoredHashCostTests {
    @Test("A stored hash may cost at most 4 times the larger of the policy and OWASP's minimum")
    func argon2Caps() {
        let owasp = Argon2Parameters.owaspDefault
        let cheap = Argon2Parameters(memoryKiB: 256, iterations: 1, parallelism: 1)
        #expect(PasswordHasher.isAffordable(owasp, policy: owasp))
        #expect(PasswordHasher.isAffordable(.init(memoryKiB: 4 * 19_456, iterations: 2, parallelism: 1), policy: owasp))
        #expect(!PasswordHasher.isAffordable(.init(memoryKiB: 4 * 19_456 + 1, iterations: 1, parallelism: 1), policy: owasp))
        #expect(!PasswordHasher.isAffordable(.init(memoryKiB: 19_456, iterations: 9, parallelism: 1), policy: owasp))
        #expect(!PasswordHasher.isAffordable(.init(memoryKiB: 1 << 20, iterations: 1, parallelism: 1), policy: owasp))
        // A cheap policy (tests) still verifies hashes made at OWASP's parameters.
        #expect(PasswordHasher.isAffordable(owasp, policy: cheap))
        // A costlier policy raises the cap with it.
        #expect(
            PasswordHasher.isAffordable(
                .init(memoryKiB: 256 * 1024, iterations: 4, parallelism: 1), policy: .init(memoryKiB: 65_536, iterations: 4, parallelism: 1)
            ))
    }

    @Test("bcrypt hashes above cost 13 are refused")
    func bcryptCaps() {
        #expect(PasswordHasher.isAffordableBcrypt("$2b$12$abcdefghijklmnopqrstuuO3H3u4W7nPslvMGY8nYkNTlC8uL/eVa"))
        #expect(PasswordHasher.isAffordableBcrypt("$2a$13$abcdefghijklmnopqrstuuO3H3u4W7nPslvMGY8nYkNTlC8uL/eVa"))
        #expect(!PasswordHasher.isAffordableBcrypt("$2y$14$abcdefghijklmnopqrstuuO3H3u4W7nPslvMGY8nYkNTlC8uL/eVa"))
        #expect(!PasswordHasher.isAffordableBcrypt("$2b$31$abcdefghijklmnopqrstuuO3H3u4W7nPslvMGY8nYkNTlC8uL/eVa"))
        #expect(!PasswordHasher.isAffordableBcrypt("$2b$x"))
    }
}
