import Foundation
import GatehouseAPI

/// Every rule a new password meets, in one place for sign-up, password change, reset and the admin
/// API: the policy's length rules, then not the user's email or the app's name, not a common password,
/// and (when a range service is set) not one known from a breach. Each refusal is a field error the
/// app and the hosted pages show.
public struct PasswordScreen: Sendable {
    public let policy: PasswordPolicy
    public let common: CommonPasswords
    public let range: PasswordRangeService?

    public init(policy: PasswordPolicy, common: CommonPasswords = .none, range: PasswordRangeService? = nil) {
        self.policy = policy
        self.common = common
        self.range = range
    }

    /// `appName` is the client's name; names shorter than four characters are not checked (they would
    /// refuse too many unrelated passwords). The range service is asked last, only for a password every
    /// local rule let through, so a refused password costs it no request.
    public func check(
        _ password: String, email: String?, appName: String?, field: String = "password", into result: inout ValidationResult
    ) async {
        guard localCheck(password, email: email, appName: appName, field: field, into: &result) else { return }
        if await isBreached(password) { result.invalidate(field: field, code: .breachedPassword, message: Self.breachedMessage) }
    }

    /// The range service's rule alone, for a flow that asks it only after its rate limit was taken
    /// (sign-up), so the service cannot be used through Gatehouse as an unmetered oracle.
    public func requireUnbreached(_ password: String, field: String = "password") async throws {
        guard await isBreached(password) else { return }
        throw GatehouseError.validation(field: field, code: .breachedPassword, message: Self.breachedMessage)
    }

    private func isBreached(_ password: String) async -> Bool {
        guard let range, case .breached = await range.check(password) else { return false }
        return true
    }

    static let breachedMessage = "This password has appeared in a data breach. Choose one you have not used anywhere else."

    /// The rules that need no network; true when the password passed them all.
    @discardableResult
    public func localCheck(
        _ password: String, email: String?, appName: String?, field: String = "password", into result: inout ValidationResult
    ) -> Bool {
        let before = result.errors.count
        policy.validate(password, email: email, field: field, into: &result)
        guard result.errors.count == before else { return false }
        if Self.containsPersonalData(password, email: email, appName: appName) {
            result.invalidate(
                field: field, code: .containsPersonalData, message: "The password must not contain your email address or the app's name.")
            return false
        }
        if common.contains(password) {
            result.invalidate(field: field, code: .commonPassword, message: "This password is too common. Choose a less guessable one.")
            return false
        }
        return true
    }

    /// The whole email address, its part before the `@`, or the app's name (spaces and punctuation
    /// ignored) inside the password, ignoring case. Parts shorter than four characters are skipped.
    static func containsPersonalData(_ password: String, email: String?, appName: String?) -> Bool {
        let squeezed = squeeze(password)
        var needles: [String] = []
        if let email = email?.lowercased(), !email.isEmpty {
            needles.append(email)
            if let at = email.firstIndex(of: "@") { needles.append(squeeze(String(email[..<at]))) }
        }
        if let appName { needles.append(squeeze(appName)) }
        let lowered = password.lowercased()
        return needles.contains { needle in
            needle.count >= 4 && (lowered.contains(needle) || squeezed.contains(needle))
        }
    }

    /// `Character` properties rather than Foundation's `CharacterSet`, a fifth of the time on Linux.
    private static func squeeze(_ text: String) -> String {
        String(text.lowercased().filter { $0.isLetter || $0.isNumber })
    }
}
