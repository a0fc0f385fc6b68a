import ArgumentParser
import Foundation
import GatehouseCore

/// The bot challenge service from the environment: `GATEHOUSE_BOT_CHALLENGE` (`turnstile`,
/// `hcaptcha` or `recaptcha`), `GATEHOUSE_BOT_CHALLENGE_SITE_KEY`, `GATEHOUSE_BOT_CHALLENGE_SECRET_FILE`
/// (a file holding the secret, so it is in no process listing or environment dump) and
/// `GATEHOUSE_BOT_CHALLENGE_VERIFY_URL` (another siteverify endpoint of the same shape). A partial
/// setting stops the start: a client that asks for a challenge the server cannot check would refuse
/// every sign-up.
enum BotChallengeEnvironment {
    static func service() throws -> BotChallengeService? {
        guard let raw = Env.value(nil, "GATEHOUSE_BOT_CHALLENGE") else { return nil }
        guard let kind = BotChallengeService.Kind(rawValue: raw) else {
            throw ValidationError("GATEHOUSE_BOT_CHALLENGE must be turnstile, hcaptcha or recaptcha")
        }
        guard let siteKey = Env.value(nil, "GATEHOUSE_BOT_CHALLENGE_SITE_KEY"),
            siteKey.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) })
        else { throw ValidationError("GATEHOUSE_BOT_CHALLENGE_SITE_KEY must hold the widget's site key") }
        guard let file = Env.value(nil, "GATEHOUSE_BOT_CHALLENGE_SECRET_FILE") else {
            throw ValidationError("GATEHOUSE_BOT_CHALLENGE_SECRET_FILE must name a file holding the siteverify secret")
        }
        let secret: String
        do {
            secret = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw ValidationError("cannot read GATEHOUSE_BOT_CHALLENGE_SECRET_FILE \(file): \(error.localizedDescription)")
        }
        guard !secret.isEmpty else { throw ValidationError("GATEHOUSE_BOT_CHALLENGE_SECRET_FILE \(file) is empty") }
        var verifyURL: String?
        if let url = Env.value(nil, "GATEHOUSE_BOT_CHALLENGE_VERIFY_URL") {
            guard let parsed = URL(string: url), let host = parsed.host,
                parsed.scheme == "https" || (parsed.scheme == "http" && Loopback.contains(host))
            else { throw ValidationError("GATEHOUSE_BOT_CHALLENGE_VERIFY_URL must be an https address") }
            verifyURL = url
        }
        return BotChallengeService(kind: kind, siteKey: siteKey, secret: secret, verifyURL: verifyURL)
    }
}
