import Foundation
import GatehouseAPI

/// The Primer seed's calls, which hand over a form's fields as a dictionary. Each runs the app's
/// ``FieldValidator`` once with every field of the form, then the typed call it stands for. Fields
/// that are not a secret and not the identifier become user properties: the known profile names
/// (`name`, `given_name`, `family_name`, `birthdate`, `picture`, `locale`) fill the ``Profile``, any
/// other name goes into ``Profile/metadata`` as a string.
extension AuthClient {
    /// Field names that are secrets: sent where a call needs them, never kept as user properties.
    public static let sensitiveFieldNames: Set<String> = [
        "password", "current_password", "new_password", "password_confirmation", "code", "pin", "otp", "token",
    ]

    /// Primer's `signUp(withFields:)`: `email` and `password` are required; the rest become the new
    /// user's properties.
    public func signUp(
        withFields fields: [String: String], acceptTerms: Bool? = nil, persist: Bool = true
    ) async throws
        -> SignUpResult
    {
        try await check(fields, for: .signUp)
        let email = try Self.required("email", in: fields)
        let password = try Self.required("password", in: fields)
        let profile = Self.userProperties(from: fields, excluding: ["email"])
        return try await sendSignUp(email: email, password: password, profile: profile, acceptTerms: acceptTerms, persist: persist)
    }

    /// Primer's `logIn(withFields:)`, named like every other sign-in: `email` and `password` are
    /// required; after a successful sign-in any other non-secret field is added to the user's
    /// properties, and the result's user (in ``SignInResult/session`` too) is the updated one.
    @discardableResult
    public func signIn(
        withFields fields: [String: String], scopes: Set<Scope> = [], persist: Bool = true
    ) async throws
        -> SignInResult
    {
        try await check(fields, for: .logIn)
        let email = try Self.required("email", in: fields)
        let password = try Self.required("password", in: fields)
        var result = try await sendLogIn(email: email, password: password, scopes: scopes, nonce: nil, persist: persist)
        guard let properties = Self.userProperties(from: fields, excluding: ["email"]) else { return result }
        result.user = try await sendProfileUpdate(Self.merging(properties, into: result.user.profile))
        result.session.user = result.user
        return result
    }

    /// Primer's `recoverPassword(withFields:)`: sends the recovery mail to `email`.
    @discardableResult
    public func recoverPassword(withFields fields: [String: String]) async throws -> MailSentResponse {
        try await check(fields, for: .recoverPassword)
        return try await sendRecovery(email: try Self.required("email", in: fields))
    }

    /// Primer's `handleFields(_:)` ("Submit Fields"): keeps the non-secret fields as the signed-in
    /// user's properties and returns the updated user.
    @discardableResult
    public func handleFields(_ fields: [String: String]) async throws -> User {
        try await check(fields, for: .updateProfile)
        guard let properties = Self.userProperties(from: fields, excluding: []) else {
            throw GatehouseError(
                code: .validationFailed, status: nil, message: "There is nothing to keep.",
                validation: Self.result { $0.invalidate(withErrorMessage: "There is nothing to keep.") })
        }
        let current = currentUser?.profile ?? Profile()
        return try await sendProfileUpdate(Self.merging(properties, into: current))
    }

    /// The fields as a profile: known names to their fields, other non-secret names to `metadata`;
    /// nil when nothing is left.
    static func userProperties(from fields: [String: String], excluding: Set<String>) -> Profile? {
        var profile = Profile()
        var metadata: [String: JSONValue] = [:]
        for (name, value) in fields where !sensitiveFieldNames.contains(name) && !excluding.contains(name) {
            if Profile.fieldNames.contains(name) {
                profile[field: name] = value
            } else if name != "phone" && name != "email" {
                metadata[name] = .string(value)
            }
        }
        if !metadata.isEmpty { profile.metadata = metadata }
        return profile == Profile() ? nil : profile
    }

    /// `metadata` is replaced whole by a profile update: the new keys join the ones already kept.
    static func merging(_ properties: Profile, into current: Profile) -> Profile {
        var update = properties
        if let added = properties.metadata {
            update.metadata = (current.metadata ?? [:]).merging(added) { $1 }
        }
        return update
    }

    static func required(_ name: String, in fields: [String: String]) throws -> String {
        guard let value = fields[name], !value.isEmpty else {
            let message = "Enter your \(name)."
            throw GatehouseError(
                code: .validationFailed, status: nil, message: message,
                validation: result { $0.invalidate(field: name, code: .required, message: message) })
        }
        return value
    }

    private static func result(_ build: (inout ValidationResult) -> Void) -> ValidationResult {
        var result = ValidationResult()
        build(&result)
        return result
    }
}
