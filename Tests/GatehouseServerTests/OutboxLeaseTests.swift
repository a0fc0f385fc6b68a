import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

/// A mail server that holds each message until released (or answers at once) and counts what it got.
private final class SlowTransport: MessageTransport {
    let holds: Bool
    let received = Mutex<[String]>([])
    private let released = Mutex(false)
    init(holds: Bool) { self.holds = holds }
    func release() { released.withLock { $0 = true } }
    func deliver(_ message: OutgoingMessage) async throws {
        while holds && !released.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        received.withLock { $0.append(message.recipient) }
    }
}

@Suite("Outbox leases")
struct OutboxLeaseTests {
    static func policy(lease: TimeInterval) -> OutboxDelivery.Policy {
        var policy = OutboxDelivery.Policy()
        policy.lease = lease
        return policy
    }

    @Test(
        "A node that died mid-send leaves a short lease: another node sends the mail once it runs out, seconds later",
        arguments: TestDatabase.available)
    func deadNode(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": try await signUp(client).email])
            // The dying node claims the row with the default lease, then never reports.
            let now = server.clock.now()
            let lease = OutboxDelivery.Policy().lease
            #expect(lease <= 15)
            let claimed = try await server.persistence.transaction {
                try await $0.outbox.claimDue(now: now, leaseUntil: now.addingTimeInterval(lease), limit: 10, channels: [.email])
            }
            #expect(claimed.count == 1)
            let survivor = SlowTransport(holds: false)
            let other = OutboxDelivery(services: server.server.services, renderer: server.server.templates, transports: [.email: survivor])
            #expect(try await other.runOnce() == 0)  // still leased
            server.clock.advance(by: lease + 1)
            #expect(try await other.runOnce() == 1)
            #expect(survivor.received.withLock { $0.count } == 1)
        }
    }

    @Test("A slow send keeps renewing its lease, so no other node sends it twice", arguments: TestDatabase.available)
    func slowSendRenews(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            _ = try await client.json(.post, "/v1/recovery", ["client_id": TestServer.openClient, "email": try await signUp(client).email])
            let slow = SlowTransport(holds: true)
            let sender = OutboxDelivery(
                services: server.server.services, renderer: server.server.templates, transports: [.email: slow],
                policy: Self.policy(lease: 1.5))
            let other = SlowTransport(holds: false)
            let second = OutboxDelivery(
                services: server.server.services, renderer: server.server.templates, transports: [.email: other],
                policy: Self.policy(lease: 1.5))
            async let first = sender.runOnce()
            func sending() async throws -> OutboxMessage? {
                try await server.persistence.read { try await $0.outbox.list(status: .sending, limit: 10) }.first
            }
            // The send is under way; then the clock passes its first lease (1.5 s).
            var waited = 0
            while try await sending() == nil && waited < 1000 { try await Task.sleep(for: .milliseconds(10)); waited += 1 }
            server.clock.advance(by: 1.6)
            // A renewal (every 0.5 s) moves the lease past the new time; without one this waits in vain.
            let advanced = server.clock.now()
            waited = 0
            while try await (sending()?.leaseUntil ?? .distantPast) <= advanced && waited < 1000 {
                try await Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            #expect(try await (sending()?.leaseUntil ?? .distantPast) > advanced, "the lease was not renewed")
            #expect(try await second.runOnce() == 0)
            slow.release()
            #expect(try await first == 1)
            #expect(slow.received.withLock { $0.count } == 1 && other.received.withLock { $0.isEmpty })
            let sent = try await server.persistence.read { try await $0.outbox.list(status: .sent, limit: 10) }
            #expect(sent.count == 1)
        }
    }
}
