import Foundation
import GatehouseAPI

/// Which of a client's required profile fields a user still lacks.
public enum RequiredFieldsPolicy {
    public static func missing(user: UserRecord, client: ClientRecord) -> [String] {
        let p = user.profile
        return client.settings.requiredFields.filter { field in
            let value = field == "phone" ? user.phone : p[field: field]
            return value?.trimmingCharacters(in: .whitespaces).isEmpty ?? true
        }
    }
}
