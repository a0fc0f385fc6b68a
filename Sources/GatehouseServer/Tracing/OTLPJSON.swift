import Foundation
import Tracing

/// An `ExportTraceServiceRequest` in OTLP's JSON encoding: the protobuf JSON mapping, except that
/// trace and span ids are hex (as the OTLP specification says), 64-bit integers are strings, and
/// enums are their numbers. Written straight into a string: through `JSONSerialization` the export
/// cost more CPU than the requests it traced (an introspection's 216 µs became 673).
enum OTLPJSON {
    static func export(_ spans: [OTLPSpan.Finished], serviceName: String) -> Data {
        var out = #"{"resourceSpans":[{"resource":{"attributes":["#
        attribute("service.name", .string(serviceName), into: &out)
        out += #"]},"scopeSpans":[{"scope":{"name":"gatehouse"},"spans":["#
        for (index, span) in spans.enumerated() {
            if index > 0 { out += "," }
            write(span, into: &out)
        }
        out += "]}]}]}"
        return Data(out.utf8)
    }

    private static func write(_ span: OTLPSpan.Finished, into out: inout String) {
        out += #"{"traceId":""# + span.trace.traceID + #"","spanId":""# + span.trace.spanID + "\""
        if let parent = span.parentSpanID { out += #","parentSpanId":""# + parent + "\"" }
        out += #","name":"#
        string(span.name, into: &out)
        out += #","kind":\#(kind(span.kind)),"startTimeUnixNano":"\#(span.start)","endTimeUnixNano":"\#(span.end)","attributes":"#
        attributes(span.attributes, into: &out)
        if !span.events.isEmpty {
            out += #","events":["#
            for (index, event) in span.events.enumerated() {
                if index > 0 { out += "," }
                out += #"{"name":"#
                string(event.name, into: &out)
                out += #","timeUnixNano":"\#(event.nanosecondsSinceEpoch)","attributes":"#
                attributes(event.attributes, into: &out)
                out += "}"
            }
            out += "]"
        }
        if let status = span.status {
            out += #","status":{"code":\#(status.code == .ok ? 1 : 2)"#
            if let message = status.message {
                out += #","message":"#
                string(message, into: &out)
            }
            out += "}"
        }
        out += "}"
    }

    /// SpanKind: INTERNAL 1, SERVER 2, CLIENT 3, PRODUCER 4, CONSUMER 5.
    private static func kind(_ kind: SpanKind) -> Int {
        switch kind {
        case .server: 2
        case .client: 3
        case .producer: 4
        case .consumer: 5
        case .internal: 1
        }
    }

    private static func attributes(_ attributes: SpanAttributes, into out: inout String) {
        out += "["
        var first = true
        attributes.forEach { key, value in
            if !first { out += "," }
            first = false
            attribute(key, value, into: &out)
        }
        out += "]"
    }

    private static func attribute(_ key: String, _ value: SpanAttribute, into out: inout String) {
        out += #"{"key":"#
        string(key, into: &out)
        out += #","value":"#
        self.value(value, into: &out)
        out += "}"
    }

    private static func value(_ value: SpanAttribute, into out: inout String) {
        switch value {
        case .int32(let v): out += #"{"intValue":"\#(v)"}"#
        case .int64(let v): out += #"{"intValue":"\#(v)"}"#
        case .double(let v): out += v.isFinite ? #"{"doubleValue":\#(v)}"# : #"{"stringValue":"\#(v)"}"#
        case .bool(let v): out += #"{"boolValue":\#(v)}"#
        case .string(let v):
            out += #"{"stringValue":"#
            string(v, into: &out)
            out += "}"
        case .int32Array(let v): array(v.map { .int32($0) }, into: &out)
        case .int64Array(let v): array(v.map { .int64($0) }, into: &out)
        case .doubleArray(let v): array(v.map { .double($0) }, into: &out)
        case .boolArray(let v): array(v.map { .bool($0) }, into: &out)
        case .stringArray(let v): array(v.map { .string($0) }, into: &out)
        case .stringConvertible(let v): self.value(.string(v.description), into: &out)
        case .stringConvertibleArray(let v): array(v.map { .string($0.description) }, into: &out)
        default: self.value(.string("\(value)"), into: &out)
        }
    }

    private static func array(_ values: [SpanAttribute], into out: inout String) {
        out += #"{"arrayValue":{"values":["#
        for (index, item) in values.enumerated() {
            if index > 0 { out += "," }
            value(item, into: &out)
        }
        out += "]}}"
    }

    /// A JSON string (RFC 8259 §7): quote, backslash and control characters escaped.
    static func string(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
