import Foundation

/// A device authorization (RFC 8628) from its request to its one token: what the device polls for
/// and what the person approves on another screen.
public struct DeviceAuthorizationRecord: Sendable, Hashable {
    public enum Status: String, Sendable {
        case pending, approved, denied
    }

    /// SHA-256 (hex) of the device code the device polls with.
    public var deviceCodeHash: String
    /// The user code's hash under the stable code key (it is typed, so looked up by hash).
    public var userCodeHash: String
    public var clientID: String
    public var scopes: [String]
    public var status: Status
    /// The authorization code minted when the person approved, sealed: the poll redeems it.
    public var sealedCode: String?
    /// The PKCE verifier of that code, sealed: the server is the device's PKCE client.
    public var sealedVerifier: String
    public var createdAt: Date
    public var expiresAt: Date
    /// Seconds between polls; grows by five at each `slow_down`.
    public var interval: Int
    public var polledAt: Date?

    public init(
        deviceCodeHash: String, userCodeHash: String, clientID: String, scopes: [String], status: Status = .pending,
        sealedCode: String? = nil, sealedVerifier: String, createdAt: Date, expiresAt: Date, interval: Int, polledAt: Date? = nil
    ) {
        self.deviceCodeHash = deviceCodeHash
        self.userCodeHash = userCodeHash
        self.clientID = clientID
        self.scopes = scopes
        self.status = status
        self.sealedCode = sealedCode
        self.sealedVerifier = sealedVerifier
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.interval = interval
        self.polledAt = polledAt
    }
}
