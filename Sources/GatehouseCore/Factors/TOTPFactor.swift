import Foundation
import GatehouseAPI

/// An authenticator app as a second factor (`totp`, `amr` `otp`): the user's confirmed TOTP
/// credential, its secret sealed under the server secret, each step accepted once.
public struct TOTPFactor: SecondFactor {
    public let id = "totp"
    public let amr = AuthenticationMethod.oneTimeCode
    let secret: ServerSecret
    let clock: any WallClock

    public init(secret: ServerSecret, clock: any WallClock) {
        self.secret = secret
        self.clock = clock
    }

    /// What a TOTP credential stores: the sealed secret, whether a first code confirmed it, and the
    /// last step accepted (a step at or before it is refused: RFC 6238 §5.2).
    struct Config: Codable, Sendable {
        var sealedSecret: String
        var confirmed: Bool
        var lastStep: Int64?
        enum CodingKeys: String, CodingKey {
            case sealedSecret = "sealed_secret"
            case confirmed
            case lastStep = "last_step"
        }
    }

    public func verify(_ response: String, userID: UUID, stores: any Stores) async throws -> Bool {
        let code = response.filter { !$0.isWhitespace }
        let now = clock.now()
        for credential in try await stores.credentials.list(userID: userID, type: .totp) {
            guard let config = try? credential.decodeConfig(Config.self), config.confirmed else { continue }
            if try await accept(code, credential: credential, config: config, now: now, stores: stores) { return true }
        }
        return false
    }

    /// A sign-in that led the user to enrol: the first code from the new app, checked against the
    /// user's unconfirmed credential, confirms it.
    func confirmEnrolment(_ response: String, userID: UUID, stores: any Stores) async throws -> Bool {
        let code = response.filter { !$0.isWhitespace }
        let now = clock.now()
        for credential in try await stores.credentials.list(userID: userID, type: .totp) {
            guard let config = try? credential.decodeConfig(Config.self), !config.confirmed else { continue }
            if try await accept(code, credential: credential, config: config, now: now, stores: stores) { return true }
        }
        return false
    }

    /// Checks `code` against one credential and, when it matches a step not used before, records that
    /// step. The step is claimed in the attempt counters first (one row per credential and step,
    /// counted atomically on every node), so two requests with the same code cannot both pass.
    func accept(_ code: String, credential: CredentialRecord, config: Config, now: Date, stores: any Stores) async throws -> Bool {
        guard let key = try? secret.open(config.sealedSecret),
            let step = TOTP.matchingStep(code, secret: key, at: now)
        else { return false }
        if let last = config.lastStep, step <= last { return false }
        let claim = try await stores.attempts.recordFailure(
            key: "totp-step:\(credential.id):\(step)", now: now, window: TOTP.period * 4)
        guard claim.count == 1 else { return false }
        var next = config
        next.lastStep = step
        next.confirmed = true
        var updated = credential
        updated.config = try CredentialRecord.encodeConfig(next)
        updated.updatedAt = now
        try await stores.credentials.update(updated)
        return true
    }
}

/// A single-use recovery code as a second factor (`recovery_code`): one credential per code, its
/// identifier the code's keyed hash, deleted when used (a delete only one request can win). Its use is
/// recorded by ``SecondFactorFlow``, which also mails the user a notice.
public struct RecoveryCodeFactor: SecondFactor {
    public let id = "recovery_code"
    public let amr = AuthenticationMethod.oneTimeCode
    let secret: ServerSecret
    let clock: any WallClock

    public init(secret: ServerSecret, clock: any WallClock) {
        self.secret = secret
        self.clock = clock
    }

    /// How many codes a set holds, and their shape: 10 groups `xxxxx-xxxxx` of an alphabet without
    /// look-alikes (50 bits each).
    public static let count = 10
    static let alphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")

    /// A fresh code, as shown to the user once.
    static func generate() -> String {
        let bytes = Secrets.randomBytes(10)
        let chars = bytes.map { alphabet[Int($0) % alphabet.count] }
        return String(chars[0..<5]) + "-" + String(chars[5..<10])
    }

    /// The stored identifier of `code` for `userID`: a keyed hash (the codes are short), bound to the user.
    func identifier(of code: String, userID: UUID) -> String {
        let normalized = code.lowercased().filter { $0.isLetter || $0.isNumber }
        let binding = "recovery-code/" + userID.uuidString.lowercased()
        return secret.stableCodeHash(normalized, binding: binding)
    }

    public func verify(_ response: String, userID: UUID, stores: any Stores) async throws -> Bool {
        guard response.count <= 64 else { return false }
        let identifier = identifier(of: response, userID: userID)
        guard let credential = try await stores.credentials.find(type: .recoveryCode, identifier: identifier),
            credential.userID == userID, try await stores.credentials.delete(id: credential.id)
        else { return false }
        // What a used code leaves behind (audit, webhook, notice mail) is the completing flow's.
        return true
    }
}
