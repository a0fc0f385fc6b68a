import Foundation

/// What a client that registered a `backchannel_logout_uri` is told when one of its sessions ends
/// (OpenID Connect Back-Channel Logout 1.0): the session's `sid` (the one its ID tokens carry) and
/// the user. Kept in the outbox, so it goes out from whichever node drains it, retried with backoff;
/// the logout token itself is signed at delivery, so a retry carries a fresh `iat` and `exp`.
public struct LogoutNotice: Codable, Sendable, Hashable {
    public var clientID: String
    public var sid: String
    public var sub: String
    /// The client's `id_token_signed_response_alg`: its logout tokens are signed like its ID tokens.
    public var algorithm: SigningAlgorithm

    public static let kind = "backchannel_logout"

    private enum CodingKeys: String, CodingKey {
        case sid, sub, algorithm
        case clientID = "client_id"
    }
}

/// Writes a ``LogoutNotice`` for each ending session whose client listens, in the transaction that
/// ends them, so a notice is never lost and never sent for a session that did not end.
public struct LogoutNotices: Sendable {
    let secret: ServerSecret
    let subjects: SubjectIdentifiers

    public init(secret: ServerSecret) {
        self.secret = secret
        self.subjects = SubjectIdentifiers(secret: secret)
    }

    func enqueue(for sessions: [SessionRecord], stores: any Stores, now: Date) async throws {
        var clients: [String: ClientRecord?] = [:]
        for session in sessions {
            if clients[session.clientID] == nil { clients[session.clientID] = .some(try await stores.clients.find(id: session.clientID)) }
            guard let client = clients[session.clientID] ?? nil, let uri = client.settings.backchannelLogoutURI else { continue }
            let notice = LogoutNotice(
                clientID: client.id, sid: session.id.uuidString.lowercased(), sub: subjects.subject(of: session.userID, for: client),
                algorithm: client.settings.idTokenSigningAlgorithm)
            try await stores.outbox.enqueue(
                OutboxMessage(
                    kind: LogoutNotice.kind, channel: .logout, recipient: uri, locale: nil,
                    sealedPayload: try secret.seal(try JSONEncoder().encode(notice)), createdAt: now))
        }
    }
}
