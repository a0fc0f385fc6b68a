import Foundation
import GatehouseCore
@testable import GatehouseServer
import GatehouseTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MetricsTestKit
import NIOCore
import Testing

/// What the edge records for every request, into a backend of the test's own (swift-metrics' test
/// kit: the process's backend is shared by every test's server), and the peer address it formats
/// for every request.
@Suite("The edge's request metrics and peer address")
struct RequestMetricsTests {
    @Test(
        "EDGE-1: each answer is counted once by route, method and status, and timed; a method outside RFC 9110's is counted as _OTHER; no request stays active after its answer"
    )
    func countsEachAnswer() async throws {
        let server = try await TestServer.startOpen(.sqlite)
        let backend = TestMetrics()
        let router = Router(context: AppRequestContext.self)
        router.add(
            middleware: EdgeMiddleware(
                trustForwardedFor: false, cors: CORSPolicy(origins: server.services.allowedOrigins),
                metrics: RequestMetrics(factory: backend)))
        router.get("/doc") { _, _ in "document" }
        router.get("/conflict") { _, _ -> String in throw HTTPError(.conflict) }
        let mkcol = try #require(HTTPRequest.Method("MKCOL"))
        router.on("/doc", method: mkcol) { _, _ -> Response in Response(status: .methodNotAllowed) }
        try await Application(router: router).test(.router) { client async throws in
            for _ in 0..<3 { #expect(try await client.executeRequest(uri: "/doc", method: .get, headers: [:], body: nil).status == .ok) }
            #expect(try await client.executeRequest(uri: "/conflict", method: .get, headers: [:], body: nil).status == .conflict)
            for _ in 0..<2 {
                #expect(try await client.executeRequest(uri: "/doc", method: mkcol, headers: [:], body: nil).status == .methodNotAllowed)
            }
        }
        await server.stop()

        let doc = [("http.route", "/doc"), ("http.request.method", "GET"), ("http.response.status_code", "200")]
        #expect(try backend.expectCounter("hb.requests", doc).totalValue == 3)
        let durations = try backend.expectTimer("http.server.request.duration", doc).values
        #expect(durations.count == 3 && durations.allSatisfy { $0 > 0 })
        // A thrown error is counted under its status, as an error too.
        let conflict = [("http.route", "/conflict"), ("http.request.method", "GET"), ("http.response.status_code", "409")]
        #expect(try backend.expectCounter("hb.requests", conflict).totalValue == 1)
        let errors = try backend.expectCounter(
            "hb.request.errors", [("http.route", "/conflict"), ("http.request.method", "GET"), ("error.type", "409")])
        #expect(errors.totalValue == 1)
        let other = [("http.route", "/doc"), ("http.request.method", "_OTHER"), ("http.response.status_code", "405")]
        #expect(try backend.expectCounter("hb.requests", other).totalValue == 2)
        #expect(!backend.counters.contains { counter in counter.dimensions.contains { $0.1 == "MKCOL" } })
        let activeGET = try backend.expectMeter("http.server.active_requests", [("http.request.method", "GET")])
        let activeOther = try backend.expectMeter("http.server.active_requests", [("http.request.method", "_OTHER")])
        #expect(activeGET.lastValue == 0 && activeOther.lastValue == 0)
        #expect(activeGET.values.max() == 1)
    }

    @Test("EDGE-2: the peer address reads as NIO's inet_ntop would write it, IPv4 by hand and IPv6 through NIO")
    func peerAddressText() throws {
        for address in ["127.0.0.1", "203.0.113.7", "0.0.0.0", "255.255.255.255", "10.200.3.45"] {
            let socket = try SocketAddress(ipAddress: address, port: 443)
            #expect(AppRequestContext.text(of: socket) == address)
            #expect(AppRequestContext.text(of: socket) == socket.ipAddress)
        }
        let v6 = try SocketAddress(ipAddress: "2001:db8::1", port: 443)
        #expect(AppRequestContext.text(of: v6) == "2001:db8::1")
        #expect(AppRequestContext.text(of: nil) == nil)
    }
}
