import Foundation
import GatehouseCore
import Synchronization

/// A clock tests move by hand: expiry and grace intervals without sleeping. One that must agree with
/// a program outside the process (pyotp's codes) follows the real clock instead.
public final class TestClock: WallClock {
    private struct State {
        var current: Date
        /// When following: the real time at which `current` was read, so now = current + elapsed.
        var followingSince: Date?
    }

    private let state: Mutex<State>

    public init(_ start: Date = Date()) { state = Mutex(State(current: start)) }

    public func now() -> Date {
        state.withLock { state in
            guard let since = state.followingSince else { return state.current }
            return state.current.addingTimeInterval(Date().timeIntervalSince(since))
        }
    }

    public func advance(by seconds: TimeInterval) {
        state.withLock { $0.current = $0.current.addingTimeInterval(seconds) }
    }

    /// From now on the clock is the real one (a clock advanced past it keeps its lead). Computed on
    /// every read, not ticked by a task: a ticking task starved of threads on a loaded machine let the
    /// clock fall 30 s behind pyotp's (MFA-5).
    public func followRealTime() {
        state.withLock { state in
            guard state.followingSince == nil else { return }
            let real = Date()
            state.current = max(state.current, real)
            state.followingSince = real
        }
    }

    /// Stops following the real clock: from now on only ``advance(by:)`` moves it (a part of a test
    /// that counts per-minute events must not see a loaded machine's minutes go by).
    public func freeze() {
        state.withLock { state in
            guard let since = state.followingSince else { return }
            state.current = state.current.addingTimeInterval(Date().timeIntervalSince(since))
            state.followingSince = nil
        }
    }
}
