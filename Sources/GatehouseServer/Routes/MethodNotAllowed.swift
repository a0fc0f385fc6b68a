import GatehouseCore
import HTTPTypes
import Hummingbird

/// A known path asked with a method it does not take (RFC 9110 §15.5.6: 405 with `Allow`). Hummingbird
/// answers every unmatched method 404, so the route table registers these answers itself.
struct MethodNotAllowed: Error, Sendable {
    var allow: [HTTPRequest.Method]

    var allowHeader: String { allow.map(\.rawValue).joined(separator: ", ") }

    /// Methods a client may send that no route takes: registered methods (RFC 9110, WebDAV, QUERY)
    /// rather than any string, so the route table stays small.
    static let others: [HTTPRequest.Method] = [
        "TRACE", "CONNECT", "QUERY", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH",
        "REPORT", "LINK", "UNLINK", "PURGE",
    ].compactMap { HTTPRequest.Method($0) }

    /// For every registered path, answers the methods it does not take with this error (`Allow`
    /// lists the common methods it does take). Call once, after every route is registered.
    static func register(on router: Router<AppRequestContext>) {
        let common: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]
        let candidates = common + others
        var byPath: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in router.routes {
            byPath[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        for (path, methods) in byPath.values {
            var taken = methods
            // The router answers HEAD for every GET route (`autoGenerateHeadEndpoints`).
            if taken.contains(.get) { taken.insert(.head) }
            let refusal = MethodNotAllowed(allow: common.filter(taken.contains))
            for method in candidates where !taken.contains(method) {
                router.on(path, method: method) { _, _ -> Response in throw refusal }
            }
        }
    }
}
