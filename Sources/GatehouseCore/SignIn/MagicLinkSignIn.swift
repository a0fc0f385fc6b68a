import Foundation
import GatehouseAPI

/// A magic link's token, as a sign-in the runner runs. The caller found the link's record (without
/// using it) and checked what binds it to the app; this strategy uses it once and signs in the account
/// its address names, or creates it proved, exactly as the code in the same mail would
/// (``OneTimeCodeSignIn``).
struct MagicLinkSignIn: SignInStrategy {
    let services: CoreServices

    /// The method the audit rows, webhooks and hooks name.
    static let method = "magic_link"

    /// What the link and the code keep. The code reads `create_user` only (``OneTimeCodeSignIn``).
    struct LinkData: Codable {
        var createUser: Bool
        var redirectTo: String?
        var pkce: PKCEChallenge
        var acceptTerms: Bool?
    }

    struct Submission: Sendable {
        var token: String
        var record: OneTimeCodeRecord
    }

    func admit(_ submission: Submission, client: ClientRecord, meta: RequestMeta, hooked: Bool) async throws -> Identifier {
        // A link's token is a 256-bit secret: nothing to count.
        .email(submission.record.identifier)
    }

    func beforeHook(_ admitted: Identifier) -> SignInHook {
        SignInHook(point: .login, method: Self.method, identifier: admitted.value, userID: nil)
    }

    func prove(
        _ submission: Submission, admitted: Identifier, client: ClientRecord, meta: RequestMeta
    ) async throws -> OneTimeCodeSignIn.Proof {
        let record = try await services.codes.redeem(token: submission.token, purpose: .login)
        guard record.clientID == client.id, record.identifier == admitted.value else { throw OneTimeCodes.expired }
        let data = record.data.flatMap { try? JSONDecoder().decode(LinkData.self, from: Data($0.utf8)) }
        return OneTimeCodeSignIn.Proof(identifier: admitted, createUser: data?.createUser ?? false)
    }

    func account(
        for proof: OneTimeCodeSignIn.Proof, changes: HookChanges, client: ClientRecord, now: Date, stores: any Stores
    ) async throws -> AccountMatch {
        var match = try await OneTimeCodeSignIn(services: services).account(
            for: proof, changes: changes, client: client, now: now, stores: stores)
        match.method = Self.method
        return match
    }
}
