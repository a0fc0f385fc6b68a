import Foundation
import Tracing

/// The W3C Trace Context identifiers of a span (https://www.w3.org/TR/trace-context/): what a
/// `traceparent` header carries and what JSON log lines name. Parsed and written here: it is one
/// header of four dash-separated hex fields, and the one package that does it needs a newer manifest.
struct TraceContext: Sendable, Equatable {
    /// 16 bytes, lowercase hex.
    var traceID: String
    /// 8 bytes, lowercase hex.
    var spanID: String
    var sampled: Bool = true

    /// A new span in this trace (or, without a parent, in a new one).
    static func child(of parent: TraceContext?) -> TraceContext {
        TraceContext(traceID: parent?.traceID ?? Self.randomHex(16), spanID: Self.randomHex(8), sampled: parent?.sampled ?? true)
    }

    var traceparent: String { "00-\(traceID)-\(spanID)-\(sampled ? "01" : "00")" }

    /// `version-traceid-parentid-flags`; a malformed header, an all-zero id or version `ff` is
    /// ignored, as the specification says (a new trace starts).
    init?(traceparent: String) {
        let parts = traceparent.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", Self.isHex(parts[0]),
            parts[1].count == 32, Self.isHex(parts[1]), parts[1] != Substring(repeating: "0", count: 32),
            parts[2].count == 16, Self.isHex(parts[2]), parts[2] != Substring(repeating: "0", count: 16),
            parts[3].count == 2, let flags = UInt8(parts[3], radix: 16),
            parts[0] != "00" || parts.count == 4
        else { return nil }
        self.init(traceID: parts[1].lowercased(), spanID: parts[2].lowercased(), sampled: flags & 1 == 1)
    }

    init(traceID: String, spanID: String, sampled: Bool = true) {
        self.traceID = traceID
        self.spanID = spanID
        self.sampled = sampled
    }

    private static func isHex(_ text: Substring) -> Bool { text.allSatisfy(\.isHexDigit) }

    /// `bytes` (8 or 16) random bytes as lowercase hex, from one or two 64-bit draws: a draw per
    /// byte and `String(format:)` per byte made a span's ids cost more than the span.
    private static func randomHex(_ bytes: Int) -> String {
        var words: [UInt64]
        // An all-zero id is invalid; at 2^-64 it is not worth a loop, but it costs nothing.
        repeat { words = (0..<(bytes / 8)).map { _ in UInt64.random(in: .min ... .max) } } while words.allSatisfy { $0 == 0 }
        var hex = [UInt8]()
        hex.reserveCapacity(bytes * 2)
        for word in words {
            for shift in stride(from: 60, through: 0, by: -4) { hex.append(digits[Int((word >> UInt64(shift)) & 0xf)]) }
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private static let digits = Array("0123456789abcdef".utf8)
}

/// Where a span's identifiers live in the task's `InstrumentationContext`.
enum TraceContextKey: InstrumentationContextKey {
    typealias Value = TraceContext
    static var nameOverride: String? { "gatehouse-trace-context" }
}

extension InstrumentationContext {
    var traceContext: TraceContext? {
        get { self[TraceContextKey.self] }
        set { self[TraceContextKey.self] = newValue }
    }
}
