import Foundation

/// Renders results as a table for people and JSON for scripts.
public enum Report {
    public static func table(_ rows: [LoadRunner.Row]) -> String {
        var lines = [
            "scenario           | conns |   rate |      ok/s | requests |  p50 ms |  p90 ms |  p99 ms |  max ms | non-2xx | errors",
            "-------------------|-------|--------|-----------|----------|---------|---------|---------|---------|---------|-------",
        ]
        for row in rows {
            let s = row.summary
            lines.append(
                [
                    pad(row.label, 18, left: true), pad("\(row.connections)", 5),
                    pad(row.rate.map { String(format: "%.0f", $0) } ?? "closed", 6),
                    pad(String(format: "%.0f", s.throughput), 9), pad("\(s.requests)", 8), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max),
                    pad("\(s.requests - s.successes)", 7), pad("\(s.transportErrors)", 6),
                ]
                .joined(separator: " | "))
        }
        return lines.joined(separator: "\n")
    }

    struct JSONRow: Codable {
        var scenario: String
        var connections: Int
        var rate: Double?
        var summary: LoadSummary
        var throughput: Double
    }

    public static func json(_ rows: [LoadRunner.Row]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let encoded = rows.map {
            JSONRow(scenario: $0.label, connections: $0.connections, rate: $0.rate, summary: $0.summary, throughput: $0.summary.throughput)
        }
        return String(decoding: try encoder.encode(encoded), as: UTF8.self)
    }

    static func ms(_ micros: UInt64) -> String { pad(String(format: "%.2f", Double(micros) / 1000), 7) }

    static func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - s.count))
        return left ? s + padding : padding + s
    }
}
