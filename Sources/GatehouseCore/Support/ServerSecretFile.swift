import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The secret file: one base64 secret per line, the current one first, then the previous ones a
/// rotation still needs to open (blank lines and `#` comments are ignored).
extension ServerSecret {
    /// Reads the secret file, creating it (0600, 256 random bits) when missing.
    public static func loadOrCreate(path: String) throws -> ServerSecret {
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) { try create(path: path) }
        guard let contents = fm.contents(atPath: path) else { throw ServerSecretError.unreadable(path) }
        let lines = String(decoding: contents, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard !lines.isEmpty else { throw ServerSecretError.malformed(path) }
        let ring = try lines.map { line -> [UInt8] in
            guard let bytes = Data(base64Encoded: line) else { throw ServerSecretError.malformed(path) }
            return Array(bytes)
        }
        return try ServerSecret(ring: ring)
    }

    /// A new secret as a line of the secret file (256 random bits, base64).
    public static func generateLine() -> String { Data(Secrets.randomBytes(32)).base64EncodedString() }

    /// Created 0600 from the first byte (FileManager writes 0644 and chmods afterwards) and with
    /// O_EXCL, so two nodes starting at once cannot each write a different secret: the loser reads
    /// the winner's.
    private static func create(path: String) throws {
        let descriptor = openExclusive(path)
        guard descriptor >= 0 else {
            if errno == EEXIST { return }
            throw ServerSecretError.unwritable(path)
        }
        defer { close(descriptor) }
        let fresh = Array((generateLine() + "\n").utf8)
        let written = fresh.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == fresh.count, fsync(descriptor) == 0 else { throw ServerSecretError.unwritable(path) }
    }
}

/// `open(O_CREAT|O_EXCL, 0600)`, outside `ServerSecret`, whose own `open` would shadow the C function.
private func openExclusive(_ path: String) -> Int32 {
    #if canImport(Glibc)
        Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    #else
        Darwin.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    #endif
}
