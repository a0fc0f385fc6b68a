import Foundation
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Bodies as real clients send them over a socket: chunked, with no Content-Length, so the size is
/// only known while reading.
@Suite("Odd transports")
struct TransportTests {
    /// Posts `megabytes` of JSON-looking bytes in 64 KiB chunks and prints the status and body.
    static let chunkedPost = """
        import http.client, json, sys
        port, path, megabytes = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        def chunks():
            yield b'{"email": "'
            for _ in range(megabytes * 16):
                yield b"a" * 65536
            yield b'"}'
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("POST", path, body=chunks(), headers={"Content-Type": sys.argv[4]}, encode_chunked=True)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may stop reading and answer before the upload ends
        answer = conn.getresponse()
        print(answer.status, answer.read().decode(errors="replace"))
        """

    @Test(
        "A 5 MB chunked body is a 413 problem (JSON) or OAuth error (form), and the server stays healthy",
        arguments: [
            ("/v1/signup", "application/json", "application/problem+json"),
            ("/oauth/token", "application/x-www-form-urlencoded", "invalid_request"),
        ])
    func chunkedTooLarge(path: String, contentType: String, expected: String) async throws {
        // The live client's own connection waits idle while the script uploads, which on a loaded host
        // (the whole suite on two cores) outlasted the 60 s default and closed it under the client.
        let server = try await TestServer.startOpen(.sqlite) { $0.idleTimeout = 600 }
        try await server.withLive { client in
            let port = try #require(client.port)
            let result = try await Subprocess.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", Self.chunkedPost, "\(port)", path, "5", contentType])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.hasPrefix("413 "), "\(result.output)")
            if expected.hasPrefix("application/") {
                #expect(result.output.contains("\"payload_too_large\""), "\(result.output)")
            } else {
                #expect(result.output.contains("\"error\":\"\(expected)\""), "\(result.output)")
            }
            // Still serving.
            let health = try await client.executeRequest(uri: "/health/live", method: .get, headers: [:], body: nil)
            #expect(health.status == .ok)
        }
    }

    /// Sends one request with a header of `size` KiB; prints the status line and body.
    static let bigHeader = """
        import socket, sys
        port, size = int(sys.argv[1]), int(sys.argv[2])
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /health/live HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\nX-Big: " + b"a" * (size * 1024) + b"\\r\\n\\r\\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            data += chunk
        head, _, body = data.partition(b"\\r\\n\\r\\n")
        print(head.split(b"\\r\\n")[0].decode(), body.decode(errors="replace"))
        """

    /// Opens a connection, sends nothing, and reports how the server ended it.
    static let idle = """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
        start = time.time()
        print("closed" if s.recv(1) == b"" else "data", round(time.time() - start))
        """

    @Test("Header fields over 80 KiB get a 431 problem document and the connection closes; the server stays healthy")
    func headersTooLarge() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.withLive { client in
            let port = try #require(client.port)
            let result = try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", Self.bigHeader, "\(port)", "90"])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.hasPrefix("HTTP/1.1 431 "), "\(result.output)")
            #expect(
                result.output.contains("\"code\":\"headers_too_large\"") && result.output.contains("\"status\":431"), "\(result.output)")
            let small = try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", Self.bigHeader, "\(port)", "1"])
            #expect(small.output.hasPrefix("HTTP/1.1 200 "), "\(small.output)")
        }
    }

    @Test("A connection that sends nothing is closed after the idle timeout")
    func idleTimeout() async throws {
        let server = try await TestServer.startOpen(.sqlite) { $0.idleTimeout = 1 }
        try await server.withLive { client in
            let port = try #require(client.port)
            let result = try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", Self.idle, "\(port)"])
            // Closed by the server (not the 30 s client timeout, which would fail the script).
            #expect(result.status == 0 && result.output.hasPrefix("closed"), "\(result.output)")
        }
    }

    @Test("/metrics: a loopback caller without a proxy is answered; through a proxy it is 403; with a token only the token opens it")
    func metricsAccess() async throws {
        let open = try await TestServer.startOpen(.sqlite)
        try await open.withLive { client in
            let direct = try await client.executeRequest(uri: "/metrics", method: .get, headers: [:], body: nil)
            #expect(direct.status == .ok)
            let proxied = try await client.executeRequest(
                uri: "/metrics", method: .get, headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.5"], body: nil)
            #expect(proxied.status == .forbidden)
        }
        let guarded = try await TestServer.startOpen(.sqlite) { $0.metricsToken = "metrics-secret" }
        try await guarded.withLive { client in
            #expect(try await client.executeRequest(uri: "/metrics", method: .get, headers: [:], body: nil).status == .unauthorized)
            let wrong = try await client.executeRequest(uri: "/metrics", method: .get, headers: [.authorization: "Bearer nope"], body: nil)
            #expect(wrong.status == .unauthorized)
            let right = try await client.executeRequest(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer metrics-secret"], body: nil)
            #expect(right.status == .ok && String(buffer: right.body).contains("hb_requests"))
        }
    }
}
