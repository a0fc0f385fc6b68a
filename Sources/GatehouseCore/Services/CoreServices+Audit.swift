import Foundation
import GatehouseAPI
import Logging

// The audit writer every flow shares: what an event leaves behind (its audit row, its webhooks) and
// the refusals worth keeping. Kept apart from `FlowHooks`, which knows nothing of `CoreServices`.
extension CoreServices {
    /// Writes what `event` leaves behind in the caller's transaction: its audit event, always, and
    /// its webhooks, when any is subscribed.
    public func recordEvent(_ event: HookEvent, stores: any Stores) async throws {
        let now = clock.now()
        try await stores.audit.append(
            AuditEvent(
                at: now, type: event.point.webhookType ?? event.point.rawValue, userID: event.userID, clientID: event.clientID,
                method: event.method, meta: event.meta))
        guard let webhooks = hooks.webhooks else { return }
        try await webhooks.enqueue(event, secret: secret, now: now, stores: stores)
    }

    /// Records in the caller's transaction that a code or link went out (`purpose`: `login`,
    /// `verification`, `recovery`), naming the identifier by its hash only.
    public func recordCodeSent(
        purpose: String, identifier: String, channel: OutboxMessage.Channel, userID: UUID?, clientID: String, meta: RequestMeta,
        stores: any Stores
    ) async throws {
        try await stores.audit.append(
            AuditEvent(
                at: clock.now(), type: AuditEvent.codeSent, userID: userID, clientID: clientID, method: "\(channel.rawValue)_\(purpose)",
                account: AuditEvent.account(of: identifier), meta: meta))
    }

    /// Runs a code check, and audits a wrong or spent code as `code.failed` (`method`: channel and
    /// purpose, as for `code.sent`) before passing the refusal on.
    public func auditingCodeCheck<T: Sendable>(
        method: String, identifier: String, clientID: String, meta: RequestMeta, _ check: () async throws -> T
    ) async throws -> T {
        do {
            return try await check()
        } catch let error as GatehouseError where error.code == .invalidCode || error.code == .codeExpired {
            await audit(
                AuditEvent(
                    at: clock.now(), type: AuditEvent.codeFailed, clientID: clientID, method: method, reason: error.code.rawValue,
                    account: AuditEvent.account(of: identifier), meta: meta))
            throw error
        }
    }

    /// Appends a refusal to the audit log on its own (the refused request wrote nothing else to keep).
    /// A failure to write it is logged, not answered: the caller's refusal stands either way.
    public func audit(_ event: AuditEvent) async {
        do {
            try await persistence.transaction { try await $0.audit.append(event) }
        } catch let error as GatehouseError where error.category == .unavailable {
            // The storage's episode is logged once where it began.
            logger.debug("audit event not written: storage unavailable", metadata: ["type": "\(event.type)"])
        } catch {
            logger.error("audit event not written", metadata: ["type": "\(event.type)", "error_type": "\(type(of: error))"])
        }
    }
}
