import Foundation
import GatehouseAPI

/// Usernames, compared the way PRECIS's UsernameCaseMapped profile (RFC 8265 §3.3) compares them:
/// width mapped and compatibility-normalized (NFKC, so `Ａda` is `ada`), case folded, normalized
/// again. Two usernames that a reader cannot tell apart are one username.
///
/// Hand-written rather than taken from a package: no listed package implements PRECIS, and Foundation
/// has the two operations it needs (NFKC and Unicode case folding).
public enum Username {
    public static let minLength = 3
    public static let maxLength = 32

    /// Names that would pass for the service, its staff or a route: refused at sign-up whatever case or
    /// width they are written in.
    public static let reserved: Set<String> = [
        "abuse", "account", "accounts", "admin", "administrator", "api", "auth", "billing", "contact", "gatehouse", "help",
        "hostmaster", "info", "login", "logout", "mail", "me", "moderator", "noreply", "no-reply", "null", "oauth", "official",
        "owner", "postmaster", "root", "security", "settings", "signin", "signup", "staff", "support", "sysadmin", "system",
        "undefined", "webmaster", "www",
    ]

    /// The form usernames are stored, compared and looked up in.
    public static func normalize(_ raw: String) -> String {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        // NFKC maps full-width and half-width forms to their ordinary ones (PRECIS's width mapping);
        // case folding can leave a string unnormalized, hence NFKC once more after it.
        let folded = trimmed.precomposedStringWithCompatibilityMapping.folding(options: .caseInsensitive, locale: nil)
        return folded.precomposedStringWithCompatibilityMapping
    }

    /// Whether a normalized username has the allowed shape: letters and digits of any script, `.`,
    /// `_` and `-`, starting with a letter or digit. Never an `@` (it would read as an email address)
    /// or a leading `+` (a phone number).
    public static func hasValidShape(_ name: String) -> Bool {
        guard (minLength...maxLength).contains(name.count), let first = name.unicodeScalars.first,
            CharacterSet.alphanumerics.contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0) }
    }

    /// Normalizes `raw` and names what is wrong with it as a field error; answers the normalized form.
    public static func validate(_ raw: String, field: String = "username", into result: inout ValidationResult) -> String {
        let name = normalize(raw)
        if name.isEmpty {
            result.invalidate(field: field, code: .required, message: "Choose a username.")
        } else if name.count < minLength {
            result.invalidate(field: field, code: .tooShort, message: "Use at least \(minLength) characters.")
        } else if name.count > maxLength {
            result.invalidate(field: field, code: .tooLong, message: "Use at most \(maxLength) characters.")
        } else if !hasValidShape(name) {
            result.invalidate(
                field: field, code: .invalidFormat,
                message: "Use letters, digits, '.', '_' and '-', starting with a letter or digit.")
        } else if reserved.contains(name) {
            result.invalidate(field: field, code: .invalidValue, message: "This username is reserved. Choose another.")
        }
        return name
    }
}
