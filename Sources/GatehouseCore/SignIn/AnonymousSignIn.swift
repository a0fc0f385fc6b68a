import Foundation
import GatehouseAPI

/// An anonymous account (Firebase's and Supabase's model), as a sign-in the runner runs: nothing to
/// check, a real user id made on the spot with no identifier and no credential, and a session whose
/// `amr` is `["anon"]` (so its tokens carry `is_anonymous`). Counted against the address block's
/// sign-up budget, and behind the client's `signup` bot challenge: each one is an account.
struct AnonymousSignIn: SignInStrategy {
    let services: CoreServices

    var botChallenge: BotChallenge.Action? { .signup }

    func admit(_ submission: Void, client: ClientRecord, meta: RequestMeta, hooked: Bool) async throws {
        guard client.settings.anonymous.isOn else {
            throw GatehouseError.methodNotEnabled("This client does not offer anonymous accounts.")
        }
        try await services.rateLimits.consume(.signup, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
    }

    func beforeHook(_ admitted: Void) -> SignInHook {
        SignInHook(point: .signup, method: Self.method, identifier: nil, userID: nil)
    }

    func prove(_ submission: Void, admitted: Void, client: ClientRecord, meta: RequestMeta) async throws {}

    func account(for proof: Void, changes: HookChanges, client: ClientRecord, now: Date, stores: any Stores) async throws -> AccountMatch {
        var user = UserRecord(email: nil, profile: changes.profile ?? Profile(), appMetadata: changes.appMetadata, createdAt: now)
        user.isAnonymous = true
        try await stores.users.insert(user)
        // Nothing was proved, and there is nothing to prove: a client that requires a verified address
        // lets an anonymous account in all the same (it has no address until it upgrades).
        return AccountMatch(
            user: user, amr: [AuthenticationMethod.anonymous], isNew: true, provesIdentifier: true, point: .signup, method: Self.method,
            identifier: nil, standsAlone: true)
    }

    static let method = "anonymous"
}
