import Foundation

/// `POST /v1/web-session`: where the browser should land once signed in.
public struct WebSessionRequest: Codable, Hashable, Sendable {
    /// A path on the Gatehouse server (`/account`), one of the client's redirect URIs, or a URL under
    /// one of its allowed web origins. Nil: the server's root.
    public var redirectTo: String?

    public init(redirectTo: String? = nil) { self.redirectTo = redirectTo }

    private enum CodingKeys: String, CodingKey {
        case redirectTo = "redirect_to"
    }
}

/// A one-time URL that signs a browser in as the app's user.
public struct WebSessionResponse: Codable, Hashable, Sendable {
    public var url: String
    /// Seconds until the URL stops working.
    public var expiresIn: Int

    public init(url: String, expiresIn: Int) {
        self.url = url
        self.expiresIn = expiresIn
    }

    private enum CodingKeys: String, CodingKey {
        case url
        case expiresIn = "expires_in"
    }
}

/// A third-party client the user let see their account (the hosted consent page), until revoked.
public struct Consent: Codable, Hashable, Sendable {
    public var clientId: String
    public var clientName: String?
    public var scopes: [String]
    public var grantedAt: Date

    public init(clientId: String, clientName: String?, scopes: [String], grantedAt: Date) {
        self.clientId = clientId
        self.clientName = clientName
        self.scopes = scopes
        self.grantedAt = grantedAt
    }

    private enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
        case clientName = "client_name"
        case scopes
        case grantedAt = "granted_at"
    }
}

/// `GET /v1/me/consents`.
public struct ConsentList: Codable, Hashable, Sendable {
    public var consents: [Consent]
    public init(consents: [Consent]) { self.consents = consents }
}
