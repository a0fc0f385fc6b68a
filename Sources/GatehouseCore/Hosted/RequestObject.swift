import Foundation

/// An authorization request passed as a JWT in `request` (OIDC Core §6.1, RFC 9101). Unsigned
/// (`alg: none`) objects say no more than the same parameters in the query and are read as such,
/// unless the client registered a `request_object_signing_alg`. Signed ones (RS256, ES256) are checked
/// against the client's registered `jwks` or its `jwks_uri`: signature, `iss` (the client), `aud` (this issuer), `exp`
/// (required, at most an hour ahead), `nbf`, and one use (by `jti`, or by the whole object).
enum RequestObject {
    /// A request object is a whole authorization request; bounded like the query it replaces.
    static let maxLength = 8192
    /// The longest a signed object may be valid for: a long-lived one is a replay waiting to happen.
    static let maxLifetime: TimeInterval = 3600

    struct Invalid: Error {
        var error = "invalid_request_object"
        var description: String
    }

    /// What checking a signed object needs besides the client: the issuer it must be for, the time,
    /// and the once-only claim of its `jti` shared by every node.
    struct Checks: Sendable {
        var issuer: String
        var now: Date
        /// Records `key` until `until`; false when it was recorded before (a replay).
        var claimOnce: @Sendable (_ key: String, _ until: Date) async throws -> Bool
        /// The client's registered or published keys.
        var keys: ClientKeySets
    }

    /// The query's parameters with the object's on top (OIDC Core §6.1: the object's values take
    /// precedence). `client_id` must agree; `request` itself is dropped.
    static func merge(
        _ jwt: String, into query: [String: String], client: ClientRecord, checks: Checks
    ) async throws -> [String: String] {
        guard jwt.utf8.count <= maxLength else { throw Invalid(description: "The request object is too long.") }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let alg = header["alg"] as? String,
            let payload = Base64URL.decode(String(parts[1])),
            let claims = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        else { throw Invalid(description: "The request object is not a JWT with a JSON object of claims.") }
        let required = client.settings.requestObjectSigningAlgorithm
        if alg == "none" {
            guard parts[2].isEmpty else { throw Invalid(description: "An unsigned request object has no signature.") }
            if let required { throw Invalid(description: "This client's request objects must be signed with \(required.rawValue).") }
        } else {
            guard let algorithm = SigningAlgorithm(name: alg), required == nil || required == algorithm else {
                throw Invalid(description: "The request object's algorithm is not one this client may use.")
            }
            try await verify(
                jwt, parts: parts, header: header, claims: claims, algorithm: algorithm, client: client, checks: checks)
        }
        var merged = query
        merged["request"] = nil
        for (name, value) in claims {
            // Registered JWT claims describe the object, not the request.
            if ["iss", "aud", "exp", "iat", "nbf", "jti", "request", "request_uri"].contains(name) { continue }
            guard let text = parameter(value) else {
                throw Invalid(description: "The request object's \(name.prefix(64)) has an unusable value.")
            }
            merged[name] = text
        }
        if let inner = claims["client_id"] as? String, let outer = query["client_id"], inner != outer {
            throw Invalid(description: "The request object's client_id differs from the request's.")
        }
        return merged
    }

    private static func verify(
        _ jwt: String, parts: [Substring], header: [String: Any], claims: [String: Any], algorithm: SigningAlgorithm,
        client: ClientRecord, checks: Checks
    ) async throws {
        guard let key = await checks.keys.key(of: client, kid: header["kid"] as? String, algorithm: algorithm, now: checks.now) else {
            throw Invalid(description: "The request object is signed with a key this client has not registered.")
        }
        guard let signature = Base64URL.decode(String(parts[2])),
            key.verifies(Data(signature), over: Data((parts[0] + "." + parts[1]).utf8))
        else { throw Invalid(description: "The request object's signature does not verify.") }
        guard claims["iss"] as? String == client.id else { throw Invalid(description: "The request object's iss must be the client.") }
        let audiences = (claims["aud"] as? [String]) ?? [(claims["aud"] as? String)].compactMap { $0 }
        guard audiences.contains(checks.issuer) else { throw Invalid(description: "The request object's aud must be this issuer.") }
        guard let exp = (claims["exp"] as? NSNumber)?.doubleValue else { throw Invalid(description: "The request object has no exp.") }
        let expiry = Date(timeIntervalSince1970: exp)
        guard expiry > checks.now else { throw Invalid(description: "The request object has expired.") }
        guard expiry <= checks.now.addingTimeInterval(maxLifetime) else {
            throw Invalid(description: "The request object is valid for too long (an hour at most).")
        }
        if let nbf = (claims["nbf"] as? NSNumber)?.doubleValue, Date(timeIntervalSince1970: nbf) > checks.now.addingTimeInterval(60) {
            throw Invalid(description: "The request object is not valid yet.")
        }
        // Once: by its jti, or (without one) by the object itself.
        let identity = (claims["jti"] as? String).map { "jti:" + $0 } ?? "jwt:" + Secrets.sha256Hex(jwt)
        guard try await checks.claimOnce("request-object:" + client.id + ":" + Secrets.sha256Hex(identity), expiry) else {
            throw Invalid(description: "The request object was used before.")
        }
    }

    /// A claim as the query would have carried it: strings as they are, numbers in decimal, the
    /// `claims` object as JSON.
    private static func parameter(_ value: Any) -> String? {
        switch value {
        case let string as String: return string
        case let number as NSNumber: return number.stringValue
        case let object as [String: Any]:
            return (try? JSONSerialization.data(withJSONObject: object)).map { String(decoding: $0, as: UTF8.self) }
        default: return nil
        }
    }
}
