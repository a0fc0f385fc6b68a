import Foundation
import GatehouseAPI
import Logging

/// The account rules of social sign-in, the same for a native token and the web flow. The federated
/// identity is a credential of type `oidc` whose identifier is `provider:subject`: stable even when
/// the provider's email changes.
///
/// - A known identity signs its user in (`is_new` false).
/// - An unknown identity whose verified email belongs to an account with a verified email is linked
///   to that account; if either side has not proved the address, the answer is
///   `identity_link_required` and nothing is linked (no silent takeover).
/// - Otherwise a new account is made (`is_new` true), verified only as far as the provider asserts.
struct SocialAccounts: Sendable {
    let services: CoreServices

    /// The provider, if the operator configured it and the client offers it.
    static func provider(_ id: String, for client: ClientRecord, services: CoreServices) throws -> SocialProvider {
        guard let provider = services.social.providers[id], client.settings.socialProviders.contains(provider.id) else {
            throw GatehouseError.providerNotEnabled
        }
        return provider
    }

    /// Runs a provider check: a refused token is answered alike whatever the reason (no oracle), the
    /// reason kept in the log and the audit log; a provider that cannot be reached is its outage.
    func checking<T: Sendable>(
        provider: SocialProvider, client: ClientRecord, meta: RequestMeta, _ check: () async throws -> T
    ) async throws -> T {
        do {
            return try await check()
        } catch IDTokenError.providerMisconfigured {
            services.logger.warning("provider misconfigured", metadata: ["provider": "\(provider.id)"])
            throw GatehouseError.providerUnavailable
        } catch let error as IDTokenError {
            services.logger.info(
                "provider token refused", metadata: ["provider": "\(provider.id)", "reason": "\(error)", "client_id": "\(client.id)"])
            await services.audit(
                AuditEvent(
                    at: services.clock.now(), type: AuditEvent.signInFailed, clientID: client.id, method: "social:" + provider.id,
                    reason: "\(error)", meta: meta))
            throw GatehouseError.invalidProviderToken
        } catch let error as GatehouseError {
            throw error
        } catch {
            services.logger.warning(
                "provider unavailable", metadata: ["provider": "\(provider.id)", "error": "\(String(describing: error).prefix(300))"])
            throw GatehouseError.providerUnavailable
        }
    }

    /// Signs in whoever `claims` names, through the runner with ``FederatedSignIn``, starting `target`
    /// (an app session, a browser's, or an authorization code). `claims` checks the provider's token
    /// or code.
    func signIn(
        provider: SocialProvider, client: ClientRecord, givenName: String?, familyName: String?, acceptTerms: Bool = false,
        meta: RequestMeta, target: SessionTarget, claims: @escaping @Sendable () async throws -> FederatedClaims
    ) async throws -> SignedIn {
        let runner = FlowRunner(services: services)
        let request = FlowRunner.SignInRequest(clientID: client.id, acceptTerms: acceptTerms, meta: meta)
        let strategy = FederatedSignIn(services: services)
        // The provider is asked once, even when the sign-in runs twice.
        let answer = ProviderAnswer(claims)
        let submission = FederatedSignIn.Submission(
            provider: provider, givenName: givenName, familyName: familyName, claims: { try await answer.value() })
        do {
            return try await runner.signIn(strategy, submission: submission, request: request, target: target)
        } catch StoreError.conflict {
            // Two first sign-ins of one identity at once (an access token sent twice): the second
            // attempt finds the identity the first made.
            return try await runner.signIn(strategy, submission: submission, request: request, target: target)
        }
    }
}

/// The provider's answer, fetched once: a second run of a sign-in must not check a single-use nonce
/// or code again.
private actor ProviderAnswer {
    let fetch: @Sendable () async throws -> FederatedClaims
    var claims: FederatedClaims?

    init(_ fetch: @escaping @Sendable () async throws -> FederatedClaims) { self.fetch = fetch }

    func value() async throws -> FederatedClaims {
        if let claims { return claims }
        let fetched = try await fetch()
        claims = fetched
        return fetched
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
