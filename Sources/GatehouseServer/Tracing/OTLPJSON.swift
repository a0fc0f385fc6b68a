import Foundation
import Tracing

/// An `ExportTraceServiceRequest` in OTLP's JSON encoding: the protobuf JSON mapping, except that
/// trace and span ids are hex (as the OTLP specification says), 64-bit integers are strings, and
/// enums are their numbers.
enum OTLPJSON {
    static func export(_ spans: [OTLPSpan.Finished], serviceName: String) -> Data {
        let document: [String: Any] = [
            "resourceSpans": [
                [
                    "resource": ["attributes": [attribute("service.name", .string(serviceName))]],
                    "scopeSpans": [["scope": ["name": "gatehouse"], "spans": spans.map(span)]],
                ] as [String: Any]
            ]
        ]
        return (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
    }

    private static func span(_ span: OTLPSpan.Finished) -> [String: Any] {
        var object: [String: Any] = [
            "traceId": span.trace.traceID, "spanId": span.trace.spanID, "name": span.name, "kind": kind(span.kind),
            "startTimeUnixNano": String(span.start), "endTimeUnixNano": String(span.end),
            "attributes": attributes(span.attributes),
        ]
        if let parent = span.parentSpanID { object["parentSpanId"] = parent }
        if !span.events.isEmpty {
            object["events"] = span.events.map {
                ["name": $0.name, "timeUnixNano": String($0.nanosecondsSinceEpoch), "attributes": attributes($0.attributes)]
                    as [String: Any]
            }
        }
        if let status = span.status {
            var value: [String: Any] = ["code": status.code == .ok ? 1 : 2]
            if let message = status.message { value["message"] = message }
            object["status"] = value
        }
        return object
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

    private static func attributes(_ attributes: SpanAttributes) -> [[String: Any]] {
        var list: [[String: Any]] = []
        attributes.forEach { key, value in list.append(attribute(key, value)) }
        return list.sorted { ($0["key"] as? String ?? "") < ($1["key"] as? String ?? "") }
    }

    private static func attribute(_ key: String, _ value: SpanAttribute) -> [String: Any] {
        ["key": key, "value": Self.value(value)]
    }

    private static func value(_ value: SpanAttribute) -> [String: Any] {
        switch value {
        case .int32(let v): ["intValue": String(v)]
        case .int64(let v): ["intValue": String(v)]
        case .double(let v): ["doubleValue": v]
        case .bool(let v): ["boolValue": v]
        case .string(let v): ["stringValue": v]
        case .int32Array(let v): array(v.map { .int32($0) })
        case .int64Array(let v): array(v.map { .int64($0) })
        case .doubleArray(let v): array(v.map { .double($0) })
        case .boolArray(let v): array(v.map { .bool($0) })
        case .stringArray(let v): array(v.map { .string($0) })
        case .stringConvertible(let v): ["stringValue": v.description]
        case .stringConvertibleArray(let v): array(v.map { .string($0.description) })
        default: ["stringValue": "\(value)"]
        }
    }

    private static func array(_ values: [SpanAttribute]) -> [String: Any] {
        ["arrayValue": ["values": values.map { Self.value($0) }]]
    }
}
