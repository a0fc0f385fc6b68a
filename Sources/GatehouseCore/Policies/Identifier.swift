import Foundation
import GatehouseAPI

/// An email address or an E.164 phone number, validated and normalized: what one-time codes and
/// identifier status are addressed to.
public enum Identifier: Sendable, Hashable {
    case email(String)
    case phone(String)

    /// Exactly one of the two, valid; a 422 naming the problem otherwise.
    public static func parse(email: String?, phone: String?) throws -> Identifier {
        var result = ValidationResult()
        switch (email?.isEmpty == false ? email : nil, phone?.isEmpty == false ? phone : nil) {
        case (let email?, nil):
            let normalized = EmailAddress.validate(email, into: &result)
            guard result.isValid else { throw GatehouseError.validation(result) }
            return .email(normalized)
        case (nil, let phone?):
            let normalized = PhoneNumber.validate(phone, into: &result)
            guard result.isValid else { throw GatehouseError.validation(result) }
            return .phone(normalized)
        default:
            throw GatehouseError.validation(field: nil, code: .required, message: "Send either email or phone.")
        }
    }

    public var value: String {
        switch self {
        case .email(let v), .phone(let v): v
        }
    }

    /// The client method that sends codes to this kind of identifier.
    public var method: String {
        switch self {
        case .email: "email_otp"
        case .phone: "sms_otp"
        }
    }

    public var masked: String {
        switch self {
        case .email(let v): EmailAddress.mask(v)
        case .phone(let v): PhoneNumber.mask(v)
        }
    }

    public var channel: OutboxMessage.Channel {
        switch self {
        case .email: .email
        case .phone: .sms
        }
    }

    /// The user this identifier belongs to.
    public func findUser(in stores: any Stores) async throws -> UserRecord? {
        switch self {
        case .email(let email): try await stores.users.find(email: email)
        case .phone(let phone): try await stores.users.find(phone: phone)
        }
    }

    /// Whether the user proved this identifier.
    public func isVerified(for user: UserRecord) -> Bool {
        switch self {
        case .email: user.emailVerified
        case .phone: user.phoneVerified
        }
    }
}
