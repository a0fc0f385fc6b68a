import Foundation

/// Which of a client's required profile fields a user still lacks.
public enum RequiredFieldsPolicy {
    public static func missing(user: UserRecord, client: ClientRecord) -> [String] {
        let p = user.profile
        return client.settings.requiredFields.filter { field in
            let value: String? =
                switch field {
                case "name": p.name
                case "given_name": p.givenName
                case "family_name": p.familyName
                case "birthdate": p.birthdate
                case "picture": p.picture
                case "locale": p.locale
                case "phone": user.phone
                default: nil
                }
            return value?.trimmingCharacters(in: .whitespaces).isEmpty ?? true
        }
    }
}
