import Foundation

/// An authorization request passed as a JWT in `request` (OIDC Core §6.1, RFC 9101). Only unsigned
/// (`alg: none`) objects are read: they say no more than the same parameters in the query, so they
/// need no key. A signed one would need the client's registered keys, which Gatehouse does not keep
/// yet, so it is refused rather than read unverified.
enum RequestObject {
    /// A request object is a whole authorization request; bounded like the query it replaces.
    static let maxLength = 8192

    struct Invalid: Error {
        var error: String
        var description: String
    }

    /// The query's parameters with the object's on top (OIDC Core §6.1: the object's values take
    /// precedence). `client_id` must agree; `request` itself is dropped.
    static func merge(_ jwt: String, into query: [String: String]) throws -> [String: String] {
        guard jwt.utf8.count <= maxLength else {
            throw Invalid(error: "invalid_request_object", description: "The request object is too long.")
        }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let alg = header["alg"] as? String
        else { throw Invalid(error: "invalid_request_object", description: "The request object is not a JWT.") }
        guard alg == "none", parts[2].isEmpty else {
            throw Invalid(error: "invalid_request_object", description: "Only unsigned request objects (alg none) are accepted.")
        }
        guard let payload = Base64URL.decode(String(parts[1])),
            let claims = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        else { throw Invalid(error: "invalid_request_object", description: "The request object's claims are not a JSON object.") }
        var merged = query
        merged["request"] = nil
        for (name, value) in claims {
            // Registered JWT claims describe the object, not the request.
            if ["iss", "aud", "exp", "iat", "nbf", "jti", "request", "request_uri"].contains(name) { continue }
            guard let text = parameter(value) else {
                throw Invalid(
                    error: "invalid_request_object", description: "The request object's \(name.prefix(64)) has an unusable value.")
            }
            merged[name] = text
        }
        if let inner = claims["client_id"] as? String, let outer = query["client_id"], inner != outer {
            throw Invalid(error: "invalid_request_object", description: "The request object's client_id differs from the request's.")
        }
        return merged
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
