import Foundation

/// A client as the CLI prints it and the admin API answers: the secret only when just created.
public struct ClientView: Encodable, Sendable {
    var clientId: String
    var name: String
    var type: String
    var clientSecret: String?
    var redirectUris: [String]
    var scopes: [String]
    var settings: ClientSettings
    var isDefault: Bool
    var createdAt: Date

    public init(_ client: ClientRecord, secret: String? = nil) {
        clientId = client.id
        name = client.name
        type = client.kind.rawValue
        clientSecret = secret
        redirectUris = client.redirectURIs
        scopes = client.scopes
        settings = client.settings
        isDefault = client.isDefault
        createdAt = client.createdAt
    }

    enum CodingKeys: String, CodingKey {
        case name, type, scopes, settings
        case clientId = "client_id"
        case clientSecret = "client_secret"
        case redirectUris = "redirect_uris"
        case isDefault = "is_default"
        case createdAt = "created_at"
    }
}
