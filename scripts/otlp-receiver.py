#!/usr/bin/env python3
"""A minimal OpenTelemetry collector for tests: OTLP/HTTP with JSON bodies on POST /v1/traces.

Each body is checked against the real schema: trace and span ids are turned from OTLP's hex into
the protobuf JSON mapping's base64 (the one place OTLP/JSON departs from it), then parsed strictly
into opentelemetry-proto's ExportTraceServiceRequest (an unknown field, a wrong type or a bad enum is
refused with 400). Every accepted span is appended to OUT as one JSON line (ids in hex, as sent);
every refused body as {"refused": reason}.

    otlp-receiver.py OUT      prints the port it listens on (127.0.0.1), then serves until killed
"""
import base64
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

OUT = sys.argv[1]


def hex_to_base64(value, length):
    raw = bytes.fromhex(value)
    if len(raw) != length:
        raise ValueError(f"an id of {len(raw)} bytes, not {length}")
    return base64.b64encode(raw).decode()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            if self.path != "/v1/traces":
                raise ValueError(f"unknown path {self.path}")
            if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
                raise ValueError(f"content type {self.headers.get('Content-Type')}")
            document = json.loads(body)
            spans = []
            for resource in document.get("resourceSpans", []):
                for scope in resource.get("scopeSpans", []):
                    for span in scope.get("spans", []):
                        spans.append(dict(span))
                        span["traceId"] = hex_to_base64(span["traceId"], 16)
                        span["spanId"] = hex_to_base64(span["spanId"], 8)
                        if "parentSpanId" in span:
                            span["parentSpanId"] = hex_to_base64(span["parentSpanId"], 8)
            json_format.Parse(json.dumps(document), ExportTraceServiceRequest(), ignore_unknown_fields=False)
            service = [a["value"]["stringValue"] for r in document["resourceSpans"]
                       for a in r["resource"]["attributes"] if a["key"] == "service.name"]
            with open(OUT, "a") as out:
                for span in spans:
                    span["service"] = service[0] if service else None
                    out.write(json.dumps(span) + "\n")
            self.send_response(200)
            answer = b"{}"
        except Exception as error:          # any refusal is the test's finding
            with open(OUT, "a") as out:
                out.write(json.dumps({"refused": f"{type(error).__name__}: {error}"}) + "\n")
            self.send_response(400)
            answer = json.dumps({"error": str(error)}).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
