/// What a form is about to do, for the app's own checks (``FieldValidator``).
public enum FieldAction: String, Sendable, Hashable {
    case signUp = "sign_up"
    case logIn = "log_in"
    case recoverPassword = "recover_password"
    case sendCode = "send_code"
    case verifyCode = "verify_code"
    case updateProfile = "update_profile"
}

/// The app's own rules, run on the device before a form's request is sent (the Primer seed's
/// `validateFields`): refuse an email domain, insist on a field the server does not know about, check
/// a value against the app's own data.
///
/// A result that is not valid stops the call before anything leaves the device: it throws the same
/// ``GatehouseError`` a server refusal does (``GatehouseError/isValidationFailure``, the result in
/// ``GatehouseError/validation``, no ``GatehouseError/status``), so one error path shows both.
///
/// The fields are what the call is about to send, by their wire names: `email`, `phone`, `password`,
/// `code`, and `profile.given_name`-style names for profile fields. The password and the code are
/// there too: the validator runs in the app, and nothing it sees is sent anywhere else.
public protocol FieldValidator: Sendable {
    func validate(_ fields: [String: String], for action: FieldAction) async -> ValidationResult
}

extension AuthClient {
    /// Runs the configured ``FieldValidator``; throws its result when it is not valid.
    func check(_ fields: [String: String?], for action: FieldAction) async throws {
        guard let validator = configuration.validator else { return }
        let result = await validator.validate(fields.compactMapValues { $0 }, for: action)
        guard !result.isValid else { return }
        throw GatehouseError(
            code: .validationFailed, status: nil, message: result.message ?? "One or more fields are invalid.",
            validation: result)
    }

    /// A profile's fields by their wire names, for ``FieldValidator``.
    static func fields(of profile: Profile?) -> [String: String?] {
        guard let profile else { return [:] }
        return [
            "profile.name": profile.name, "profile.given_name": profile.givenName, "profile.family_name": profile.familyName,
            "profile.birthdate": profile.birthdate, "profile.picture": profile.picture, "profile.locale": profile.locale,
        ]
    }
}
