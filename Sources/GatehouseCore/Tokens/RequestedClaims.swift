import Foundation

/// The `claims` request parameter (OIDC Core §5.5): single claims asked for the userinfo answer and
/// for the ID token, beyond what the scopes release. Only the names are kept: `essential` changes
/// nothing here (a claim Gatehouse has is always released), and `value`/`values` are honoured for
/// `acr` alone, as the level asked for.
public struct RequestedClaims: Codable, Sendable, Hashable {
    public var userinfo: [String]
    public var idToken: [String]
    /// The lowest level among `id_token.acr`'s `value`/`values` that Gatehouse knows.
    var acr: AssuranceLevel?

    public init(userinfo: [String] = [], idToken: [String] = []) {
        self.userinfo = userinfo
        self.idToken = idToken
    }

    private enum CodingKeys: String, CodingKey {
        case userinfo
        case idToken = "id_token"
        case acr
    }

    public var isEmpty: Bool { userinfo.isEmpty && idToken.isEmpty }

    /// Parses the parameter's JSON; nil for anything that is not the object §5.5 describes. Names
    /// Gatehouse does not know are dropped (§5.5.1: they are ignored).
    static func parse(_ json: String) -> RequestedClaims? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        func names(_ member: String) -> [String]? {
            guard let value = object[member] else { return [] }
            guard let requests = value as? [String: Any] else { return nil }
            // Each member is null or an object (`essential`, `value`, `values`).
            guard requests.values.allSatisfy({ $0 is NSNull || $0 is [String: Any] }) else { return nil }
            return requests.keys.filter { UserClaims.supported.contains($0) }.sorted()
        }
        guard let userinfo = names("userinfo"), let idToken = names("id_token") else { return nil }
        var claims = RequestedClaims(userinfo: userinfo, idToken: idToken)
        if let acr = (object["id_token"] as? [String: Any])?["acr"] as? [String: Any] {
            let values = (acr["values"] as? [String] ?? []) + [acr["value"] as? String].compactMap { $0 }
            let known = values.compactMap { Int($0) }.filter { (0...2).contains($0) }
            if !known.isEmpty { claims.acr = known.contains(where: { $0 < 2 }) ? .firstFactor : .multiFactor }
        }
        return claims
    }
}
