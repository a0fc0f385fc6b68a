#if canImport(Security) || GATEHOUSE_SECURITY_SHIM
    import Foundation
    #if canImport(Security)
        import Security
    #else
        import SecurityShim
    #endif

    /// The session in the Keychain (this device only, readable after first unlock), optionally shared
    /// with app extensions through an access group — the default store on Apple platforms.
    ///
    /// Refreshes take a file lock like ``FileSessionStore`` does, so an app and its extensions never
    /// present the same refresh token at once. The lock only works across processes that open the same
    /// file: for an app and its extensions, put it in the app group's container.
    public struct KeychainSessionStore: SessionStore {
        public let service: String
        public let account: String
        public let accessGroup: String?
        /// The lock file refreshes take turns on.
        public let lockFile: URL

        /// - Parameters:
        ///   - service: the Keychain item's `kSecAttrService`.
        ///   - account: its `kSecAttrAccount`; the PKCE verifier is kept under `<account>.pkce`.
        ///   - accessGroup: a Keychain access group shared with the app's extensions, if they sign in too.
        ///   - lockFile: defaults to a file in the application support directory, which serves one app. To
        ///     share the session with extensions, pass one in the app group's container, e.g.
        ///     `FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: "group.com.example")!
        ///     .appendingPathComponent("gatehouse.lock")`.
        public init(service: String = "gatehouse", account: String = "session", accessGroup: String? = nil, lockFile: URL? = nil) {
            self.service = service
            self.account = account
            self.accessGroup = accessGroup
            self.lockFile = lockFile ?? Self.defaultLockFile(service: service, account: account)
        }

        private var item: KeychainItem { KeychainItem(service: service, account: account, accessGroup: accessGroup) }
        private var verifierItem: KeychainItem { KeychainItem(service: service, account: account + ".pkce", accessGroup: accessGroup) }

        public func load() async throws -> StoredSession? {
            try item.read().map { try JSONDecoder.gatehouse.decode(StoredSession.self, from: $0) }
        }

        public func save(_ session: StoredSession) async throws {
            try item.write(try JSONEncoder.gatehouse.encode(session))
        }

        public func clear() async throws { try item.delete() }

        public func savePendingVerifier(_ verifier: String?) async throws {
            guard let verifier else { return try verifierItem.delete() }
            try verifierItem.write(Data(verifier.utf8))
        }

        public func loadPendingVerifier() async throws -> String? {
            try verifierItem.read().map { String(decoding: $0, as: UTF8.self) }
        }

        public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
            try await FileLock.withExclusiveAccess(at: lockFile, body)
        }

        static func defaultLockFile(service: String, account: String) -> URL {
            let support =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            let name = AuthClient.Configuration.pathComponent("\(service).\(account).lock")
            return support.appendingPathComponent("Gatehouse", isDirectory: true).appendingPathComponent(name)
        }
    }

    /// A Keychain call failed with this `OSStatus`.
    public struct KeychainError: Error, Sendable {
        public let status: OSStatus
    }
#endif
