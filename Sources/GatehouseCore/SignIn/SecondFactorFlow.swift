import Foundation
import GatehouseAPI

/// Completes a sign-in that ``SessionStarter`` kept waiting for a second factor: the factor is checked
/// (a bounded number of times), the waiting flow is used up exactly once, and the session it was
/// going to start starts, through the same gate, now at the multi-factor level.
public struct SecondFactorFlow: Sendable {
    let services: CoreServices

    /// Wrong answers a waiting sign-in takes before it is gone: the first factor must be passed again.
    public static let maxAttempts = 5

    public init(services: CoreServices) { self.services = services }

    /// What completing the factor started, for whom, and through which client.
    public struct Completed: Sendable {
        public var signedIn: SignedIn
        /// What the waiting sign-in was going to start (the hosted flow to go on with, the nonce).
        public var target: SessionTarget
    }

    public func complete(flowID: UUID, factor factorID: String, response: String, meta: RequestMeta) async throws -> Completed {
        let now = services.clock.now()
        let runner = FlowRunner(services: services)
        // The flow's id is the secret here: only the first factor's answer carried it.
        let flow = try await runner.find(flowID, kind: .secondFactor)
        guard let data = flow.data, let pending = try? JSONDecoder().decode(PendingSignIn.self, from: Data(data.utf8)) else {
            throw GatehouseError.flowExpired
        }
        guard pending.factors.contains(factorID), let factor = services.factors[factorID] else {
            throw GatehouseError.validation(field: "factor", code: .invalidValue, message: "Use one of the factors the flow names.")
        }
        let client = try await services.clients.resolve(flow.clientID)
        // Counted before the answer is checked, so concurrent guesses cannot pass the limit; the last
        // allowed failure ends the waiting sign-in.
        let window = flow.expiresAt.timeIntervalSince(now) + 60
        let key = "second-factor:" + flowID.uuidString.lowercased()
        let attempt = try await services.persistence.transaction { try await $0.attempts.recordFailure(key: key, now: now, window: window) }
        if attempt.count > Self.maxAttempts {
            // Used up by this attempt or by one beside it: gone either way.
            _ = try? await runner.complete(flowID, meta: meta)
            throw GatehouseError.flowExpired
        }
        let userID = pending.authentication.userID
        let verified = try await services.persistence.read { stores in
            try await factor.verify(response, userID: userID, stores: stores)
        }
        guard verified else {
            await services.audit(
                AuditEvent(
                    at: now, type: AuditEvent.signInFailed, userID: userID, clientID: client.id, method: factor.id, reason: "invalid_code",
                    meta: meta))
            throw GatehouseError.invalidCode(remaining: max(Self.maxAttempts - attempt.count, 0))
        }
        let authentication = pending.authentication.completed(with: factor)
        let starter = services.starter
        let (user, start) = try await runner.complete(flowID, meta: meta) { _, stores -> (UserRecord, SessionStart) in
            guard let user = try await stores.users.find(id: userID), user.state == .active else { throw GatehouseError.accountDisabled }
            try await stores.users.recordLogin(id: userID, at: now)
            return (user, try await starter.start(authentication, client: client, target: pending.target, meta: meta, stores: stores))
        }
        var shown = user
        shown.lastLoginAt = now
        return Completed(
            signedIn: SignedIn(started: try start.get(), user: shown, client: client, isNew: authentication.isNew), target: pending.target)
    }
}
