import Foundation
import GatehouseServer
import GatehouseTesting
import HummingbirdTesting
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

    @Test("A 5 MB chunked body is a 413 problem (JSON) or OAuth error (form), and the server stays healthy",
          arguments: [("/v1/signup", "application/json", "application/problem+json"),
                      ("/oauth/token", "application/x-www-form-urlencoded", "invalid_request")])
    func chunkedTooLarge(path: String, contentType: String, expected: String) async throws {
        let server = try await TestServer.startOpen(.sqlite)
        try await server.server.makeApplication().test(.live) { client in
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
        await server.stop()
    }
}
