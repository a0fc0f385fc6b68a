import Foundation
import GatehouseAPI

/// Checks profile fields: lengths, a real past `birthdate`, a BCP 47 `locale`, https `picture`,
/// `profile` and `website`, an IANA `zoneinfo`.
public struct ProfileValidator: Sendable {
    public static let maxNameLength = 200
    public static let maxMetadataBytes = 16 * 1024

    public init() {}

    /// Throws the validation error for a profile that breaks a rule.
    public static func requireValid(_ profile: Profile, now: Date) throws {
        var result = ValidationResult()
        ProfileValidator().validate(profile, now: now, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
    }

    /// Whether app metadata fits the same 16 KiB as the user's own metadata.
    public static func fits(appMetadata: [String: JSONValue]) -> Bool {
        ((try? JSONEncoder().encode(appMetadata))?.count ?? Int.max) <= maxMetadataBytes
    }

    public func validate(_ profile: Profile, now: Date, into result: inout ValidationResult) {
        let texts = [
            ("name", profile.name), ("given_name", profile.givenName), ("family_name", profile.familyName),
            ("middle_name", profile.middleName), ("nickname", profile.nickname), ("preferred_username", profile.preferredUsername),
            ("gender", profile.gender), ("address.locality", profile.address?.locality), ("address.region", profile.address?.region),
            ("address.postal_code", profile.address?.postalCode), ("address.country", profile.address?.country),
        ]
        for (field, value) in texts {
            guard let value else { continue }
            // Counted in code points, as JSON Schema's maxLength counts (a grapheme may hold many).
            if value.unicodeScalars.count > Self.maxNameLength {
                result.invalidate(field: "profile.\(field)", code: .tooLong, message: "Use at most \(Self.maxNameLength) characters.")
            } else if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                result.invalidate(field: "profile.\(field)", code: .invalidFormat, message: "Control characters are not allowed.")
            }
        }
        if let birthdate = profile.birthdate, !Self.isPastDate(birthdate, now: now) {
            result.invalidate(
                field: "profile.birthdate", code: .invalidFormat, message: "Use a date from 1850-01-01 up to today, YYYY-MM-DD.")
        }
        if let locale = profile.locale, !Self.isLanguageTag(locale) {
            result.invalidate(field: "profile.locale", code: .invalidFormat, message: "Use a BCP 47 language tag such as en-GB.")
        }
        for (field, value) in [("picture", profile.picture), ("profile", profile.profileURL), ("website", profile.website)] {
            if let value, !Self.isHTTPSURL(value) {
                result.invalidate(field: "profile.\(field)", code: .invalidFormat, message: "Use an https URL.")
            }
        }
        if let zone = profile.zoneinfo, zone.count > 64 || TimeZone(identifier: zone) == nil || !zone.contains("/") && zone != "UTC" {
            result.invalidate(field: "profile.zoneinfo", code: .invalidFormat, message: "Use an IANA time zone such as Europe/Oslo.")
        }
        // The multi-line members: newlines allowed, other control characters not.
        for (field, value) in [
            ("address.formatted", profile.address?.formatted), ("address.street_address", profile.address?.streetAddress),
        ] {
            guard let value else { continue }
            if value.unicodeScalars.count > 1000 {
                result.invalidate(field: "profile.\(field)", code: .tooLong, message: "Use at most 1000 characters.")
            } else if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) {
                result.invalidate(
                    field: "profile.\(field)", code: .invalidFormat, message: "Control characters other than line breaks are not allowed.")
            }
        }
        if let metadata = profile.metadata,
            let data = try? JSONEncoder().encode(metadata), data.count > Self.maxMetadataBytes
        {
            result.invalidate(field: "profile.metadata", code: .tooLong, message: "Metadata is limited to 16 KiB.")
        }
    }

    static func isPastDate(_ value: String, now: Date) -> Bool {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), y >= 1850
        else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: y, month: m, day: d)) else { return false }
        // Rejects 2023-02-30 and friends: the calendar rolls them over into another day.
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        return back.year == y && back.month == m && back.day == d && date < now
    }

    /// RFC 5646 shape: a 2–3 (or 4–8) letter language and 1–8 alphanumeric subtags.
    static func isLanguageTag(_ value: String) -> Bool {
        guard value.count <= 35 else { return false }
        let subtags = value.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = subtags.first, (2...8).contains(language.count),
            language.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return subtags.dropFirst().allSatisfy { tag in
            (1...8).contains(tag.count) && tag.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }

    static func isHTTPSURL(_ value: String) -> Bool {
        guard value.count <= 2048, let url = URL(string: value), url.scheme?.lowercased() == "https",
            let host = url.host, !host.isEmpty
        else { return false }
        return true
    }
}
