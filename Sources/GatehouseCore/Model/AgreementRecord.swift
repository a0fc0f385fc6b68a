import Foundation

/// The terms versions a user accepted for one client.
public struct AgreementRecord: Sendable, Hashable {
    public var userID: UUID
    public var clientID: String
    public var platformVersion: String?
    public var clientVersion: String?
    public var acceptedAt: Date

    public init(userID: UUID, clientID: String, platformVersion: String?, clientVersion: String?, acceptedAt: Date) {
        self.userID = userID
        self.clientID = clientID
        self.platformVersion = platformVersion
        self.clientVersion = clientVersion
        self.acceptedAt = acceptedAt
    }

    /// Up to date when every version the client currently names was accepted; a client without terms
    /// asks nothing.
    public static func isUpToDate(_ agreement: AgreementRecord?, settings: ClientSettings) -> Bool {
        (settings.termsPlatformVersion == nil || agreement?.platformVersion == settings.termsPlatformVersion)
            && (settings.termsClientVersion == nil || agreement?.clientVersion == settings.termsClientVersion)
    }
}
