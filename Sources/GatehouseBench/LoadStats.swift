import Histogram

/// What one worker saw: latencies (µs) in an HDR histogram, and answers by status. Workers keep their
/// own and merge at the end, so recording is never contended.
public struct LoadStats: Sendable {
    public private(set) var latencies = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    public private(set) var statuses: [Int: Int] = [:]
    /// Requests that never got an answer (connection errors, timeouts).
    public private(set) var transportErrors = 0
    /// Answers outside 2xx that are what the scenario asked for (a device poll's `authorization_pending`).
    public private(set) var expectedRefusals = 0

    public init() {}

    public mutating func record(status: Int, microseconds: UInt64, expected: Bool = false) {
        _ = latencies.record(max(1, microseconds))
        statuses[status, default: 0] += 1
        if expected, !(200..<300).contains(status) { expectedRefusals += 1 }
    }

    public mutating func recordTransportError() { transportErrors += 1 }

    public mutating func merge(_ other: LoadStats) {
        latencies.add(other.latencies)
        statuses.merge(other.statuses, uniquingKeysWith: +)
        transportErrors += other.transportErrors
        expectedRefusals += other.expectedRefusals
    }

    public var requests: Int { statuses.values.reduce(0, +) }
    /// 2xx answers and expected refusals: what the scenario meant to do.
    public var successes: Int { statuses.filter { (200..<300).contains($0.key) }.values.reduce(0, +) + expectedRefusals }

    public func summary(seconds: Double) -> LoadSummary {
        LoadSummary(
            requests: requests, successes: successes, transportErrors: transportErrors, seconds: seconds,
            p50: micros(50), p90: micros(90), p99: micros(99), p999: micros(99.9),
            max: requests == 0 ? 0 : latencies.max, statuses: statuses)
    }

    private func micros(_ percentile: Double) -> UInt64 { requests == 0 ? 0 : latencies.valueAtPercentile(percentile) }
}

/// The figures a run reports.
public struct LoadSummary: Sendable, Codable, Equatable {
    public var requests: Int
    public var successes: Int
    public var transportErrors: Int
    public var seconds: Double
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var p999: UInt64
    public var max: UInt64
    public var statuses: [Int: Int]

    /// Successful requests per second: failures are not throughput.
    public var throughput: Double { seconds > 0 ? Double(successes) / seconds : 0 }
}
