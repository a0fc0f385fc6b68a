import Foundation
import Logging

/// The dependencies every flow needs, passed in `init` rather than found through a locator.
public struct CoreServices: Sendable {
    public let persistence: any Persistence
    public let hasher: PasswordHasher
    public let tokens: AccessTokens
    public let secret: ServerSecret
    public let clock: any WallClock
    public let settings: CoreSettings
    public let logger: Logger
    /// Shared by every copy of these services: one cache per server.
    public let clientCache = ClientCache()

    public init(
        persistence: any Persistence, hasher: PasswordHasher, tokens: AccessTokens, secret: ServerSecret,
        clock: any WallClock, settings: CoreSettings, logger: Logger
    ) {
        self.persistence = persistence
        self.hasher = hasher
        self.tokens = tokens
        self.secret = secret
        self.clock = clock
        self.settings = settings
        self.logger = logger
    }
}
