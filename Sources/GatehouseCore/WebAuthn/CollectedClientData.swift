import Foundation

/// The client data a browser or platform signs over (WebAuthn §5.8.1), as JSON. Members the
/// specification may add later are ignored, as §5.8.1.2 asks.
public struct CollectedClientData: Sendable, Equatable, Decodable {
    public var type: String
    /// The challenge, base64url as the client encoded it.
    public var challenge: String
    public var origin: String
    public var crossOrigin: Bool?
    public var topOrigin: String?

    /// Client data is a few hundred bytes; anything far larger is not one.
    public static let maximumLength = 8 * 1024

    public init(json: [UInt8]) throws(WebAuthnError) {
        guard json.count <= Self.maximumLength else { throw .malformed("clientDataJSON is longer than 8 KiB") }
        do {
            self = try JSONDecoder().decode(Self.self, from: Data(json))
        } catch {
            throw .malformed("clientDataJSON is not the JSON object WebAuthn describes")
        }
    }
}
