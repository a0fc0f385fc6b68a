import GatehouseCore
import HTTPTypes
import Hummingbird

/// A known path asked with a method it does not take (RFC 9110 §15.5.6: 405 with `Allow`). Hummingbird
/// answers every unmatched method 404, so the route table registers these answers itself.
struct MethodNotAllowed: Error, Sendable {
    var allow: [HTTPRequest.Method]

    var allowHeader: String { allow.map(\.rawValue).joined(separator: ", ") }

    /// For every registered path, answers the common methods it does not take with this error. Call
    /// once, after every route is registered.
    static func register(on router: Router<AppRequestContext>) {
        let candidates: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]
        var byPath: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in router.routes {
            byPath[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        for (path, methods) in byPath.values {
            var taken = methods
            // Hummingbird answers HEAD for every GET route when the responder is built.
            if taken.contains(.get) { taken.insert(.head) }
            let refusal = MethodNotAllowed(allow: candidates.filter(taken.contains))
            for method in candidates where !taken.contains(method) {
                router.on(path, method: method) { _, _ -> Response in throw refusal }
            }
        }
    }
}
