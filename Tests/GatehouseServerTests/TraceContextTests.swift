import Foundation
import Testing
import Tracing

@testable import GatehouseServer

/// The `traceparent` header as W3C Trace Context level 1 defines it: what continues a trace and what
/// starts a new one instead.
@Suite("Trace context")
struct TraceContextTests {
    @Test(
        "TR-2: traceparent: a valid header continues its trace; a malformed one, zero ids or version ff start a new trace; ids are lowercase hex of 16 and 8 bytes"
    )
    func traceparent() throws {
        let valid = try #require(TraceContext(traceparent: "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"))
        #expect(valid.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && valid.spanID == "00f067aa0ba902b7" && valid.sampled)
        #expect(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled == false)
        // A later version may add fields after the flags; version 00 may not.
        #expect(TraceContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra") != nil)
        for bad in [
            "", "00", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1g",
        ] {
            #expect(TraceContext(traceparent: bad) == nil, "accepted \(bad)")
        }
        let child = TraceContext.child(of: valid)
        #expect(child.traceID == valid.traceID && child.spanID != valid.spanID && child.spanID.count == 16)
        let root = TraceContext.child(of: nil)
        #expect(root.traceID.count == 32 && root.traceID.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(TraceContext(traceparent: root.traceparent) == root)
    }

    @Test(
        "TR-3: the OTLP JSON written by hand is JSON: names and attribute values with quotes, backslashes, control characters and non-ASCII come back as they went in"
    )
    func exportEscaping() throws {
        let tricky = "a \"quoted\" \\ path\n\t\u{01} é 🙂"
        var attributes: SpanAttributes = [:]
        attributes["text"] = tricky
        attributes["count"] = 3
        attributes["flag"] = true
        let span = OTLPSpan.Finished(
            trace: TraceContext.child(of: nil), parentSpanID: nil, name: tricky, kind: .server, start: 1, end: 2, attributes: attributes,
            events: [], status: SpanStatus(code: .error, message: tricky))
        let data = OTLPJSON.export([span], serviceName: "svc \"x\"")
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let resource = try #require((object["resourceSpans"] as? [[String: Any]])?.first)
        let spans = try #require(((resource["scopeSpans"] as? [[String: Any]])?.first?["spans"]) as? [[String: Any]])
        #expect(spans.first?["name"] as? String == tricky)
        #expect((spans.first?["status"] as? [String: Any])?["message"] as? String == tricky)
        let values = (spans.first?["attributes"] as? [[String: Any]] ?? []).reduce(into: [String: [String: Any]]()) {
            $0[$1["key"] as? String ?? ""] = $1["value"] as? [String: Any]
        }
        #expect(values["text"]?["stringValue"] as? String == tricky)
        #expect(values["count"]?["intValue"] as? String == "3" && values["flag"]?["boolValue"] as? Bool == true)
    }
}
