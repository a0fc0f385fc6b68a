import Foundation

/// Finds the client a request names (or the default one) and authenticates confidential clients.
public struct ClientResolver: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public func resolve(_ clientID: String?) async throws -> ClientRecord {
        let client: ClientRecord?
        if let clientID, !clientID.isEmpty {
            client = try await find(clientID)
        } else {
            client = try await services.persistence.read { try await $0.clients.findDefault() }
        }
        guard let client else { throw GatehouseError.invalidClient("Unknown client_id.") }
        return client
    }

    private func find(_ id: String) async throws -> ClientRecord? {
        try await services.clientCache.client(id: id) {
            try await services.persistence.read { try await $0.clients.find(id: id) }
        }
    }

    /// Authenticates a client for `/oauth/*`: confidential clients must prove their secret.
    public func authenticate(clientID: String?, secret: String?) async throws -> ClientRecord {
        guard let clientID, !clientID.isEmpty else { throw OAuthError.invalidClient("Client authentication required.") }
        guard let client = try await find(clientID) else {
            throw OAuthError.invalidClient("Unknown client.")
        }
        if client.kind == .confidential {
            guard let secret, let stored = client.secretHash,
                Secrets.constantTimeEquals(Secrets.sha256Hex(secret), stored)
            else { throw OAuthError.invalidClient("Client authentication failed.") }
        }
        return client
    }

    /// Like ``authenticate(clientID:secret:)`` but only confidential clients pass (introspection, client credentials).
    public func authenticateConfidential(clientID: String?, secret: String?) async throws -> ClientRecord {
        let client = try await authenticate(clientID: clientID, secret: secret)
        guard client.kind == .confidential else {
            throw OAuthError.unauthorizedClient("Only confidential clients may use this endpoint.")
        }
        return client
    }
}
