import GatehouseCore

/// The bot challenge widget on the hosted pages: placed in each form whose request the client asks a
/// challenge for, loaded from its provider (the page's policy names the provider's origins and no
/// other), and read back from the hidden field the widget adds to its form.
struct BotChallengeWidget: Sendable {
    let service: BotChallengeService

    /// The field each provider's widget fills in its form.
    static let formFields = ["cf-turnstile-response", "h-captcha-response", "g-recaptcha-response"]

    static func token(in fields: [String: String]) -> String? {
        formFields.lazy.compactMap { fields[$0] }.first { !$0.isEmpty }
    }

    /// The forms of each page, by the request each sends.
    static func actions(onPage name: String) -> [BotChallenge.Action] {
        switch name {
        case "signin": [.signin, .codeSend]
        case "signup": [.signup]
        case "recovery": [.codeSend]
        default: []
        }
    }

    /// Marks the page's forms that need the widget (`challenge_signin`, `challenge_signup`,
    /// `challenge_code_send`) and gives the widget's values (`bot_challenge`); answers the origins the
    /// page's policy must allow, none when no form has it.
    func place(onPage name: String, client: ClientRecord, into values: inout [String: Any]) -> [String] {
        let asked = Self.actions(onPage: name).filter { BotChallenge.asked($0, by: client) }
        guard !asked.isEmpty else { return [] }
        for action in asked { values["challenge_" + action.rawValue] = true }
        values["bot_challenge"] = ["class": cssClass, "site_key": service.siteKey, "script_url": scriptURL]
        return sources
    }

    var cssClass: String {
        switch service.kind {
        case .turnstile: "cf-turnstile"
        case .hcaptcha: "h-captcha"
        case .recaptcha: "g-recaptcha"
        }
    }

    var scriptURL: String {
        switch service.kind {
        case .turnstile: "https://challenges.cloudflare.com/turnstile/v0/api.js"
        case .hcaptcha: "https://js.hcaptcha.com/1/api.js"
        case .recaptcha: "https://www.google.com/recaptcha/api.js"
        }
    }

    /// Where the widget's script, frames and calls come from, per each provider's CSP guidance.
    var sources: [String] {
        switch service.kind {
        case .turnstile: ["https://challenges.cloudflare.com"]
        case .hcaptcha: ["https://hcaptcha.com", "https://*.hcaptcha.com"]
        case .recaptcha:
            ["https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/", "https://recaptcha.google.com/recaptcha/"]
        }
    }
}
