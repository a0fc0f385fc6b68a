import NIOHTTP1
import Tracing

/// Writes trace headers into an outgoing AsyncHTTPClient request (hooks, providers, webhooks).
struct HTTPClientHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) { headers.replaceOrAdd(name: key, value: value) }
}
