import Foundation

/// Finds the client a request names (or the default one) and authenticates confidential clients.
public struct ClientResolver: Sendable {
    let persistence: any Persistence
    let cache: ClientCache

    public init(persistence: any Persistence, cache: ClientCache) {
        self.persistence = persistence
        self.cache = cache
    }

    public func resolve(_ clientID: String?) async throws -> ClientRecord {
        let client: ClientRecord?
        if let clientID, !clientID.isEmpty {
            client = try await find(clientID)
        } else {
            client = try await persistence.read { try await $0.clients.findDefault() }
        }
        guard let client else { throw GatehouseError.invalidClient("Unknown client_id.") }
        return client
    }

    private func find(_ id: String) async throws -> ClientRecord? {
        try await cache.client(id: id) {
            try await persistence.read { try await $0.clients.find(id: id) }
        }
    }

    /// Authenticates a client for `/oauth/*`: confidential clients must prove their secret.
    public func authenticate(clientID: String?, secret: String?) async throws -> ClientRecord {
        guard let clientID, !clientID.isEmpty else { throw GatehouseError.clientAuthenticationFailed("Client authentication required.") }
        guard let client = try await find(clientID) else {
            throw GatehouseError.clientAuthenticationFailed("Unknown client.")
        }
        if client.kind == .confidential {
            guard let secret, let stored = client.secretHash,
                Secrets.constantTimeEquals(Secrets.sha256Hex(secret), stored)
            else { throw GatehouseError.clientAuthenticationFailed("Client authentication failed.") }
        }
        return client
    }

    /// Like ``authenticate(clientID:secret:)`` but only confidential clients pass (introspection, client credentials).
    public func authenticateConfidential(clientID: String?, secret: String?) async throws -> ClientRecord {
        let client = try await authenticate(clientID: clientID, secret: secret)
        guard client.kind == .confidential else {
            throw GatehouseError.unauthorizedClient("Only confidential clients may use this endpoint.")
        }
        return client
    }
}
