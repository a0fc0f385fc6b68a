import Foundation

/// The assurance policy of a server with second factors: a client with `mfa=off` never asks for one
/// by itself; with `optional` (the default) a user who enrolled a factor always gets the second step;
/// with `required`, a user without one enrols an authenticator app before the first session. A request
/// that asks for the second level (`acr_values=2`) is treated like `required`, whatever the client's
/// setting. A user's passkey may complete any sign-in that needs a second factor. Reads the user's
/// credentials once per session start, inside its transaction (one indexed read by user), never on
/// refresh.
public struct FactorPolicy: AssurancePolicy {
    /// Whether codes by text message can be sent (a gateway is configured).
    let smsAvailable: Bool

    public init(smsAvailable: Bool = false) { self.smsAvailable = smsAvailable }

    /// What a user without a factor may enrol to complete a sign-in that requires one.
    public static let enrollable = ["totp"]

    public func requirement(
        userID: UUID, amr: [String], client: ClientRecord, asked: AssuranceLevel, stores: any Stores
    ) async throws
        -> AssuranceRequirement
    {
        let mfa = client.settings.mfa
        let demanded = asked >= .multiFactor || mfa == .required
        guard mfa != .off || demanded else { return .firstFactor }
        // One indexed read that finds nothing for most users: the apps and the passkeys (recovery codes
        // are counted only for a user with an app, as `enrolledFactors` does).
        let credentials = try await stores.credentials.list(userID: userID, types: [.totp, .passkey])
        var enrolled = Self.enrolledFactors(in: credentials)
        if !enrolled.isEmpty, try await stores.credentials.count(userID: userID, type: .recoveryCode) > 0 {
            enrolled.append("recovery_code")
        }
        // A passkey completes a sign-in that needs a second factor, but having one does not make the
        // password need one: a user who wants that enrols an app.
        let passkey = Self.hasPasskey(credentials) ? [PasskeyFactor.factorID] : []
        if !enrolled.isEmpty { return AssuranceRequirement(level: .multiFactor, factors: passkey + enrolled) }
        guard demanded else { return .firstFactor }
        // No app: a code to a proved address on another channel than the first factor's will do, or
        // the user enrols an app. (A user with an app is asked for it: an address code would be weaker.)
        let addresses = try await stores.users.find(id: userID).map {
            AddressCodeFactor.offered(to: $0, firstFactor: amr, smsAvailable: smsAvailable)
        }
        if !passkey.isEmpty { return AssuranceRequirement(level: .multiFactor, factors: passkey + (addresses ?? [])) }
        return AssuranceRequirement(level: .multiFactor, factors: (addresses ?? []) + Self.enrollable, enrol: true)
    }

    /// Whether the user holds a passkey that may still sign in (not marked as possibly cloned).
    static func hasPasskey(_ credentials: [CredentialRecord]) -> Bool {
        credentials.contains { $0.type == .passkey && (try? $0.decodeConfig(PasskeyStrategy.Config.self))?.flagged == nil }
    }

    /// The factor ids a user can complete a sign-in with: a confirmed authenticator app, recovery codes
    /// left (only beside a confirmed app: recovery codes alone are no factor).
    static func enrolledFactors(userID: UUID, stores: any Stores) async throws -> [String] {
        // Every session start asks: one indexed read that finds nothing for most users. Recovery codes
        // are only counted for a user with an app.
        let totp = try await stores.credentials.list(userID: userID, type: .totp).contains { credential in
            (try? credential.decodeConfig(TOTPFactor.Config.self))?.confirmed ?? false
        }
        guard totp else { return [] }
        return try await stores.credentials.count(userID: userID, type: .recoveryCode) > 0 ? ["totp", "recovery_code"] : ["totp"]
    }

    /// A confirmed app among credentials already read (recovery codes are the caller's to count).
    static func enrolledFactors(in credentials: [CredentialRecord]) -> [String] {
        credentials.contains { credential in
            credential.type == .totp && (try? credential.decodeConfig(TOTPFactor.Config.self))?.confirmed == true
        } ? ["totp"] : []
    }
}
