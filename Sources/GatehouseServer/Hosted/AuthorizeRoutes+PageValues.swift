import GatehouseAPI
import GatehouseCore
import HTTPTypes

// What the hosted sign-in page shows, as values its templates read, apart from the routes that serve it.
extension AuthorizeRoutes {
    /// The page a failed form is shown on again.
    static func view(after action: String) -> String? {
        switch action {
        case "signup", "recovery": action
        case "otp-verify": "otp_code"
        default: nil
        }
    }

    /// Errors the user can act on: shown on the page they came from (key of the text, status).
    static func shown(_ error: GatehouseError) -> (String, HTTPResponse.Status)? {
        switch error.code {
        case .invalidCredentials: ("error_credentials", .unauthorized)
        case .emailNotVerified: ("error_not_verified", .forbidden)
        case .accountDisabled: ("error_disabled", .forbidden)
        case .rateLimited, .serverBusy: ("error_rate_limited", .tooManyRequests)
        case .alreadyRegistered: ("error_signup_exists", .conflict)
        case .validationFailed: ("error_field_invalid", .unprocessableContent)
        case .invalidCode, .codeExpired: ("error_code", .unauthorized)
        case .invalidPasskey: ("error_passkey", .badRequest)
        case .notEnabled: ("error_otp_unavailable", .forbidden)
        case .botChallengeRequired, .botChallengeFailed: ("error_bot_challenge", .forbidden)
        default: nil
        }
    }

    static func terms(_ client: ClientRecord, _ strings: [String: String]) -> [[String: String]] {
        let terms = TermsFlow.terms(client)
        let version = strings["terms_version"] ?? "version"
        return [(terms.platform, "terms_platform_link"), (terms.client, "terms_client_link")].compactMap { document, key in
            guard let document, let url = document.url else { return nil }
            return ["title": "\(strings[key] ?? key) (\(version) \(document.version))", "url": url]
        }
    }

    static func displayName(_ provider: SocialProvider) -> String {
        switch provider.kind {
        case .apple: "Apple"
        case .google: "Google"
        case .facebook: "Facebook"
        case .github: "GitHub"
        case .linkedin: "LinkedIn"
        case .x: "X"
        case .oidc, .oauth2: provider.id.prefix(1).uppercased() + provider.id.dropFirst()
        }
    }

    static func inputType(_ field: String) -> String {
        switch field {
        case "birthdate": "date"
        case "phone": "tel"
        case "picture": "url"
        default: "text"
        }
    }

    static func autocomplete(_ field: String) -> String {
        switch field {
        case "name": "name"
        case "given_name": "given-name"
        case "family_name": "family-name"
        case "birthdate": "bday"
        case "picture": "photo"
        case "locale": "language"
        case "phone": "tel"
        default: "off"
        }
    }
}
