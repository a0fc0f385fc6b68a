import Foundation

/// The `sub` a client is shown for a user (OIDC Core §8): the user id, or for a client with
/// `subject_type=pairwise` a value of its sector alone, so relying parties cannot link their users
/// by comparing subjects. Every place that hands a client a subject (ID tokens, access tokens,
/// userinfo, introspection, logout tokens) asks here, and every place that reads one back
/// (`id_token_hint`, bearer tokens) compares with what this gives.
public struct SubjectIdentifiers: Sendable {
    let secret: ServerSecret

    public init(secret: ServerSecret) { self.secret = secret }

    public func subject(of userID: UUID, for client: ClientRecord) -> String {
        let id = userID.uuidString.lowercased()
        guard client.settings.subjectType == .pairwise, let sector = client.settings.sectorIdentifier else { return id }
        return secret.pairwiseSubject(userID: id, sector: sector)
    }

    /// The sector of redirect URIs that all share one host (OIDC Core §8.1), nil when they do not.
    /// Fixed into the client's settings when pairwise subjects are turned on, so a later change of
    /// redirect URIs cannot change its users' subjects.
    public static func sector(of redirectURIs: [String]) -> String? {
        let hosts = Set(redirectURIs.compactMap { URL(string: $0)?.host?.lowercased() }.filter { !$0.isEmpty })
        guard hosts.count == 1, redirectURIs.count == redirectURIs.compactMap({ URL(string: $0)?.host }).count else { return nil }
        return hosts.first
    }

    /// A sector identifier as a setting takes it: a host name.
    static func isValidSector(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 253
            && value.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }
    }
}
