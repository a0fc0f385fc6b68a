import Dispatch
import HTTPTypes
import Hummingbird
import Metrics
import NIOConcurrencyHelpers

/// The request metrics Hummingbird's `MetricsMiddleware` records, under the same names and labels
/// (`docs/operations.md` lists them), recorded by ``EdgeMiddleware`` when the answer leaves the
/// router instead of after its last byte is written. Written here rather than used from Hummingbird
/// because that middleware wraps every body in a post-write closure, which takes each response off
/// Hummingbird's single-write path: head, body and end then go out as three writes and three socket
/// syscalls, most of what JWKS and discovery cost above a bare route (`docs/benchmarks.md`).
/// Gatehouse's bodies are whole buffers, so "answered" and "written" differ only by that write.
///
/// Handles are made once per method and per route, method and status: the factory's own lookup
/// builds label strings on every call. Bounded: routes are the table's patterns, statuses three
/// digits, and a method other than RFC 9110's and PATCH is counted as `_OTHER` (OpenTelemetry's
/// name), so a client inventing methods cannot grow the cache or the scrape.
final class RequestMetrics: Sendable {
    struct EndpointID: Hashable {
        let route: String
        let method: String
        let status: HTTPResponse.Status
    }

    struct Endpoint: Sendable {
        let requests: Counter
        let duration: Metrics.Timer
        let errors: Counter

        init(_ id: EndpointID, factory: any MetricsFactory) {
            let labels = [
                ("http.route", id.route), ("http.request.method", id.method), ("http.response.status_code", String(id.status.code)),
            ]
            requests = Counter(label: "hb.requests", dimensions: labels, factory: factory)
            duration = Metrics.Timer(
                label: "http.server.request.duration", dimensions: labels, preferredDisplayUnit: .seconds, factory: factory)
            errors = Counter(
                label: "hb.request.errors",
                dimensions: [("http.route", id.route), ("http.request.method", id.method), ("error.type", String(id.status.code))],
                factory: factory)
        }
    }

    /// A request in progress: counted as active until ``answered(_:route:)`` or ``threw(_:route:)``.
    struct InFlight: Sendable {
        let method: String
        let start: UInt64
        let active: Meter
    }

    private static let knownMethods: Set<HTTPRequest.Method> = [
        .get, .head, .post, .put, .delete, .connect, .options, .trace, .patch,
    ]
    private let methods = NIOLockedValueBox<[String: Meter]>([:])
    private let endpoints = NIOLockedValueBox<[EndpointID: Endpoint]>([:])
    private let factory: any MetricsFactory

    /// `factory`: the process's backend (the registry behind `/metrics`) unless a test brings its own.
    init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    func started(_ method: HTTPRequest.Method) -> InFlight {
        let label = Self.knownMethods.contains(method) ? method.rawValue : "_OTHER"
        let active = methods.withLockedValue { map in
            if let meter = map[label] { return meter }
            let meter = Meter(label: "http.server.active_requests", dimensions: [("http.request.method", label)], factory: factory)
            map[label] = meter
            return meter
        }
        active.increment()
        return InFlight(method: label, start: DispatchTime.now().uptimeNanoseconds, active: active)
    }

    func answered(_ request: InFlight, route: String?, status: HTTPResponse.Status) {
        let metrics = endpoint(.init(route: route ?? "Unknown", method: request.method, status: status))
        metrics.requests.increment()
        metrics.duration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - request.start))
        request.active.decrement()
    }

    /// An error no renderer turned into an answer (normally none): counted under the status it
    /// carries, 500 otherwise.
    func threw(_ request: InFlight, route: String?, error: any Error) {
        let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
        let metrics = endpoint(.init(route: route ?? "NotFound", method: request.method, status: status))
        metrics.requests.increment()
        metrics.errors.increment()
        request.active.decrement()
    }

    private func endpoint(_ id: EndpointID) -> Endpoint {
        endpoints.withLockedValue { map in
            if let metrics = map[id] { return metrics }
            let metrics = Endpoint(id, factory: factory)
            map[id] = metrics
            return metrics
        }
    }
}
