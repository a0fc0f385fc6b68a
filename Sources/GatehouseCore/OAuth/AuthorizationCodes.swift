import Crypto
import Foundation
import GatehouseAPI

/// Authorization codes (RFC 6749 §4.1) for the deep link back into the app: single use, one minute,
/// bound to client and redirect URI, with PKCE (RFC 7636) checked at the exchange.
/// Only the minting and the code's shape live here, so the session starter that mints codes needs
/// none of the services the exchange (``CodeExchange``) uses.
public enum AuthorizationCodes {
    public static let lifetime: TimeInterval = 60

    struct Grant: Codable {
        var redirectURI: String
        var pkce: PKCEChallenge?
        var amr: [String]
        /// Whether the sign-in behind the code created the account (social web sign-in); the token
        /// response carries it.
        var isNew: Bool?
        /// The credential the sign-in used, so its sessions end with it (an unlinked identity).
        var credentialID: String?
        /// The app asked to accept the client's terms; recorded when the app redeems the code, so a
        /// crafted link that never reaches the app accepts nothing.
        var acceptTerms: Bool?
        /// What the hosted sign-in (`/oauth/authorize`) adds.
        var hosted: HostedGrant?
    }

    /// Writes a code for `authentication`, in the caller's transaction. Only ``SessionStarter`` calls
    /// it: a code is a session deferred, and passes the same gate.
    static func mint(
        _ authentication: Authentication, client: ClientRecord, target: SessionTarget.Code, now: Date, stores: any Stores
    ) async throws -> String {
        let code = Secrets.token(prefix: "gh_ac_")
        let grant = Grant(
            redirectURI: target.redirectURI, pkce: target.pkce, amr: authentication.amr, isNew: authentication.isNew,
            credentialID: authentication.credentialID, acceptTerms: target.acceptTerms ? true : nil, hosted: target.hosted)
        let data = String(decoding: try JSONEncoder().encode(grant), as: UTF8.self)
        let userID = authentication.userID
        try await stores.codes.insert(
            OneTimeCodeRecord(
                purpose: .authorizationCode, identifier: userID.uuidString.lowercased(), clientID: client.id,
                userID: userID, codeHash: nil, tokenHash: Secrets.sha256Hex(code), maxAttempts: 1, data: data,
                createdAt: now, expiresAt: now.addingTimeInterval(Self.lifetime)))
        return code
    }

    /// The session a code starts has an id derived from the code, so a second use of the code finds it
    /// and ends it: whoever replays a code may have seen the tokens the first use got (RFC 6749 §4.1.2).
    static func sessionID(of code: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(("gatehouse.code-session:" + code).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: custom
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// `redirect` with `code` added to its query, whatever the scheme (app schemes included).
    static func append(code: String, to redirect: String) throws -> URL {
        try append([("code", code)], to: redirect)
    }

    /// `redirect` with `fields` added to its query, form-encoded by hand: URLComponents leaves `+` as
    /// it is, which a form decoder reads as a space (an app's `state` must come back exactly).
    public static func append(_ fields: [(String, String)], to redirect: String) throws -> URL {
        guard var components = URLComponents(string: redirect) else { throw GatehouseError.badRequest("Invalid redirect.") }
        // Nothing to add (a logout without `state`) leaves the URI as registered, without a bare `?`.
        if !fields.isEmpty {
            components.percentEncodedQuery = ([components.percentEncodedQuery].compactMap { $0 } + [FormEncoding.encode(fields)])
                .joined(separator: "&")
        }
        guard let url = components.url else { throw GatehouseError.badRequest("Invalid redirect.") }
        return url
    }
}

extension OneTimeCodeRecord.Purpose {
    public static let authorizationCode = OneTimeCodeRecord.Purpose(rawValue: "authorization_code")
}
