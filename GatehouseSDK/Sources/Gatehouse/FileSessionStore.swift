import Foundation

/// The session in a file readable only by its owner (0600), written atomically (a temporary file
/// renamed over the old one), with an advisory lock file so that several processes sharing it take
/// turns refreshing.
public struct FileSessionStore: SessionStore {
    public let url: URL

    /// - Parameter url: the session file; its directory must exist or be creatable.
    public init(url: URL) { self.url = url }

    public func load() async throws -> StoredSession? {
        guard let data = FileManager.default.contents(atPath: url.path), !data.isEmpty else { return nil }
        return try JSONDecoder.gatehouse.decode(StoredSession.self, from: data)
    }

    public func save(_ session: StoredSession) async throws {
        try AtomicFile.write(try JSONEncoder.gatehouse.encode(session), to: url)
    }

    public func savePendingVerifier(_ verifier: String?) async throws {
        let path = url.path + ".pkce"
        guard let verifier else {
            try? FileManager.default.removeItem(atPath: path)
            return
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: path)
        guard FileManager.default.createFile(atPath: path, contents: Data(verifier.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
    }

    public func loadPendingVerifier() async throws -> String? {
        FileManager.default.contents(atPath: url.path + ".pkce").map { String(decoding: $0, as: UTF8.self) }
    }

    public func clear() async throws {
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }

    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await FileLock.withExclusiveAccess(at: URL(fileURLWithPath: url.path + ".lock"), body)
    }
}

extension JSONEncoder {
    static var gatehouse: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    static var gatehouse: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
