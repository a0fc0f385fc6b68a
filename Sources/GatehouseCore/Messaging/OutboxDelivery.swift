import Foundation
import Logging
import Synchronization

/// Drains the outbox: claims due rows with a lease, renders them, hands them to the transport of their
/// channel, and records the outcome. At-least-once: a node that dies mid-send leaves a short lease that
/// runs out within seconds, and another node sends again with the same Message-ID; a live node renews
/// the leases of what it is still sending, however slow the mail server.
public struct OutboxDelivery: Sendable {
    public struct Policy: Sendable {
        /// Attempts before a row is declared dead.
        public var maxAttempts = 10
        public var baseDelay: TimeInterval = 5
        public var maxDelay: TimeInterval = 3600
        /// How long a claim holds without renewal; renewed every third of it while sending.
        public var lease: TimeInterval = 15
        public var batch = 16
        public init() {}
    }

    let services: CoreServices
    let renderer: any MessageRenderer
    let transports: [OutboxMessage.Channel: any MessageTransport]
    let policy: Policy
    let messageIDDomain: String

    public init(
        services: CoreServices, renderer: any MessageRenderer, transports: [OutboxMessage.Channel: any MessageTransport],
        policy: Policy = Policy()
    ) {
        self.services = services
        self.renderer = renderer
        self.transports = transports
        self.policy = policy
        self.messageIDDomain = URL(string: services.settings.publicURL)?.host ?? "gatehouse.local"
    }

    /// One round: returns how many rows were handled, so the caller knows whether to poll again at once.
    @discardableResult
    public func runOnce() async throws -> Int {
        let now = services.clock.now()
        let lease = now.addingTimeInterval(policy.lease)
        let batch = policy.batch
        // A channel without a transport (no mail server configured) keeps its messages waiting.
        let channels = Set(transports.keys)
        let claimed = try await services.persistence.transaction {
            try await $0.outbox.claimDue(now: now, leaseUntil: lease, limit: batch, channels: channels)
        }
        guard !claimed.isEmpty else { return 0 }
        let sending = InFlight(claimed.map(\.id))
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.renewLeases(of: sending)
                return false
            }
            for message in claimed {
                group.addTask {
                    await self.deliver(message)
                    sending.finish(message.id)
                    return true
                }
            }
            var delivered = 0
            for await isDelivery in group where isDelivery {
                delivered += 1
                if delivered == claimed.count { group.cancelAll() }
            }
        }
        return claimed.count
    }

    /// Until cancelled: pushes the lease of every row still being sent a whole lease ahead.
    func renewLeases(of sending: InFlight) async {
        while true {
            do {
                try await Task.sleep(for: .milliseconds(Int64(policy.lease * 1000 / 3)))
            } catch {
                return
            }
            let ids = sending.ids
            if ids.isEmpty { return }
            let until = services.clock.now().addingTimeInterval(policy.lease)
            do {
                try await services.persistence.transaction { try await $0.outbox.renewLease(ids: ids, until: until) }
            } catch {
                services.logger.warning("outbox lease renewal failed", metadata: ["error_type": "\(type(of: error))"])
            }
        }
    }

    func deliver(_ row: OutboxMessage) async {
        let outcome: Result<Void, DeliveryFailure>
        do {
            guard let transport = transports[row.channel] else {
                throw DeliveryFailure(permanent: true, reason: "no transport for \(row.channel.rawValue)")
            }
            let payload = try services.secret.open(row.sealedPayload)
            if row.channel == .webhook || row.channel == .logout {
                // The event (or logout notice) is the body; the row id is its `webhook-id`, the same on
                // every attempt.
                try await transport.deliver(
                    OutgoingMessage(
                        kind: row.kind, channel: row.channel, recipient: row.recipient, subject: nil,
                        text: String(decoding: payload, as: UTF8.self), html: nil,
                        messageID: "msg_" + row.id.uuidString.lowercased()))
            } else {
                let variables = try JSONDecoder().decode([String: String].self, from: payload)
                let rendered = try renderer.render(kind: row.kind, channel: row.channel, locale: row.locale, variables: variables)
                try await transport.deliver(
                    OutgoingMessage(
                        kind: row.kind, channel: row.channel, recipient: row.recipient, subject: rendered.subject,
                        text: rendered.text, html: rendered.html,
                        messageID: "<\(row.id.uuidString.lowercased())@\(messageIDDomain)>"))
            }
            outcome = .success(())
        } catch let failure as DeliveryFailure {
            outcome = .failure(failure)
        } catch {
            outcome = .failure(DeliveryFailure(permanent: false, reason: "\(type(of: error))"))
        }
        let now = services.clock.now()
        do {
            switch outcome {
            case .success:
                try await services.persistence.transaction { try await $0.outbox.markSent(id: row.id, at: now) }
            case .failure(let failure):
                let retryAt =
                    (failure.permanent || row.attempts >= policy.maxAttempts) ? nil : now.addingTimeInterval(delay(after: row.attempts))
                try await services.persistence.transaction {
                    try await $0.outbox.markFailed(id: row.id, error: failure.description, retryAt: retryAt, at: now)
                }
                services.logger.warning(
                    "outbox delivery failed",
                    metadata: [
                        "id": "\(row.id)", "kind": "\(row.kind)", "attempt": "\(row.attempts)",
                        "dead": "\(retryAt == nil)", "reason": "\(failure.reason.prefix(200))",
                    ])
            }
        } catch {
            // The lease runs out and the row is tried again: nothing is lost.
            services.logger.error("outbox bookkeeping failed", metadata: ["id": "\(row.id)", "error_type": "\(type(of: error))"])
        }
    }

    /// Exponential backoff with jitter, capped.
    func delay(after attempts: Int) -> TimeInterval {
        let exponential = policy.baseDelay * pow(2, Double(max(0, attempts - 1)))
        let capped = min(policy.maxDelay, exponential)
        return capped * Double.random(in: 0.8...1.2)
    }
}

/// The rows of one round still being sent, shared by the senders and the lease renewer.
final class InFlight: Sendable {
    private let rows: Mutex<Set<UUID>>
    init(_ ids: [UUID]) { rows = Mutex(Set(ids)) }
    func finish(_ id: UUID) { _ = rows.withLock { $0.remove(id) } }
    var ids: [UUID] { rows.withLock { Array($0) } }
}
