/// Asks `attempt` every `interval` until it returns a value, or returns nil once `deadline` has passed.
///
/// Tests wait for an outcome this way, not for a fixed time or a fixed number of tries: the whole
/// suite on two cores stretches every step (single tests have taken 150 s there against 1 s alone),
/// and a long deadline costs nothing when the outcome comes. It runs on the caller's actor
/// (`isolation`), so an actor can wait on its own state.
public func eventually<T>(
    isolation: isolated (any Actor)? = #isolation, within deadline: Duration = .seconds(120), every interval: Duration = .milliseconds(50),
    _ attempt: () async throws -> T?
) async throws -> T? {
    let end = ContinuousClock.now + deadline
    while true {
        if let value = try await attempt() { return value }
        if ContinuousClock.now >= end { return nil }
        try await Task.sleep(for: interval)
    }
}
