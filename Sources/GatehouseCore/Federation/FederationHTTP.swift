import Foundation

/// How the core fetches a provider's keys and discovery document: a GET that answers the body of a
/// 2xx, or throws. The server's implementation refuses anything but https (and loopback http).
public protocol FederationHTTP: Sendable {
    func get(_ url: String) async throws -> Data
}
