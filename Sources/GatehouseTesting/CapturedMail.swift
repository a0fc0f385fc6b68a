import GatehouseCore
import Synchronization

/// A transport that keeps every message, and can be told to fail, for tests of the outbox.
public final class CapturedMail: MessageTransport {
    private let state = Mutex<(messages: [OutgoingMessage], failuresLeft: Int)>(([], 0))

    public init() {}

    public var messages: [OutgoingMessage] { state.withLock { $0.messages } }

    /// The next `count` deliveries fail with a temporary error.
    public func failNext(_ count: Int) { state.withLock { $0.failuresLeft = count } }

    public func deliver(_ message: OutgoingMessage) async throws {
        try state.withLock { state in
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                throw DeliveryFailure(permanent: false, reason: "test failure")
            }
            state.messages.append(message)
        }
    }
}
