import Foundation

/// The assurance policy of a server with second factors: a client with `mfa=off` never asks for one;
/// with `optional` (the default) a user who enrolled a factor always gets the second step. Reads the
/// user's factors once per session start, inside its transaction (one indexed read by user), never on
/// refresh.
public struct FactorPolicy: AssurancePolicy {
    public init() {}

    public func requirement(userID: UUID, client: ClientRecord, stores: any Stores) async throws -> AssuranceRequirement {
        guard client.settings.mfa != .off else { return .firstFactor }
        let enrolled = try await Self.enrolledFactors(userID: userID, stores: stores)
        return enrolled.isEmpty ? .firstFactor : AssuranceRequirement(level: .multiFactor, factors: enrolled)
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
}
