/// When each request of an open-loop run is due: request `i` is meant to start at `i / rate` seconds.
/// Latency is counted from that intended start, not from when a connection got round to sending it,
/// so a stalled server is charged for every request it held up (no coordinated omission) — the
/// figure a user arriving at that moment would have seen.
public struct OpenLoopSchedule: Sendable {
    public let rate: Double

    public init(rate: Double) {
        precondition(rate > 0, "an open-loop rate must be positive")
        self.rate = rate
    }

    /// Microseconds from the start of the run at which request `index` is due.
    public func dueMicros(_ index: Int) -> UInt64 { UInt64((Double(index) * 1_000_000 / rate).rounded()) }

    /// Latency of request `index` that completed `completedMicros` after the start of the run.
    public func latencyMicros(_ index: Int, completedMicros: UInt64) -> UInt64 {
        let due = dueMicros(index)
        return completedMicros > due ? completedMicros - due : 0
    }

    /// Requests due before `durationMicros` has passed.
    public func requests(inMicros durationMicros: UInt64) -> Int {
        Int((Double(durationMicros) / 1_000_000 * rate).rounded(.up))
    }
}
