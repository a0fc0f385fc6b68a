import Foundation
import GatehouseAPI

/// The JSON a before-hook receives and a webhook carries: the Standard Webhooks shape
/// (`type`, `timestamp`, `data`). Built only from a ``HookEvent``, which has no field for a secret.
public struct HookEventBody: Encodable, Sendable {
    public struct Payload: Encodable, Sendable {
        var clientID: String
        var method: String?
        var identifier: String?
        var userID: String?
        var profile: Profile?
        var customData: String?
        var scopes: [String]?
        var ip: String?
        var userAgent: String?

        enum CodingKeys: String, CodingKey {
            case method, identifier, profile, scopes, ip
            case clientID = "client_id"
            case userID = "user_id"
            case customData = "custom_data"
            case userAgent = "user_agent"
        }
    }

    public var type: String
    public var timestamp: String
    public var data: Payload

    public init(type: String, event: HookEvent, at date: Date) {
        self.type = type
        self.timestamp = date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
        self.data = Payload(
            clientID: event.clientID, method: event.method, identifier: event.identifier,
            userID: event.userID?.uuidString.lowercased(), profile: event.profile, customData: event.customData,
            scopes: event.scopes, ip: event.meta.ipAddress, userAgent: event.meta.userAgent)
    }

    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
