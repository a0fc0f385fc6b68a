import Foundation
import GatehouseCore
import Synchronization

/// A clock tests move by hand: expiry and grace intervals without sleeping.
public final class TestClock: WallClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date()) { current = Mutex(start) }

    public func now() -> Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
