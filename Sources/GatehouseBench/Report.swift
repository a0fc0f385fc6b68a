import Foundation

/// Renders results as a table for people and JSON for scripts.
public enum Report {
    public static func table(_ results: [(Scenario, LoadSummary)], connections: Int) -> String {
        var lines = [
            "scenario    | conns |      ok/s | requests |  p50 ms |  p90 ms |  p99 ms |  max ms | non-2xx | errors",
            "------------|-------|-----------|----------|---------|---------|---------|---------|---------|-------",
        ]
        for (scenario, s) in results {
            let failures = s.requests - s.successes
            lines.append(
                [pad(scenario.rawValue, 11, left: true), pad("\(connections)", 5), pad(String(format: "%.0f", s.throughput), 9),
                 pad("\(s.requests)", 8), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max), pad("\(failures)", 7), pad("\(s.transportErrors)", 6)]
                    .joined(separator: " | "))
        }
        return lines.joined(separator: "\n")
    }

    public static func json(_ results: [(Scenario, LoadSummary)]) throws -> String {
        struct Row: Encodable {
            var scenario: Scenario
            var summary: LoadSummary
            var throughput: Double
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(results.map { Row(scenario: $0.0, summary: $0.1, throughput: $0.1.throughput) }), as: UTF8.self)
    }

    static func ms(_ micros: UInt64) -> String { pad(String(format: "%.2f", Double(micros) / 1000), 7) }

    static func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - s.count))
        return left ? s + padding : padding + s
    }
}
