import Crypto
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server secret and the keys derived from it. Each use gets its own HKDF-derived key so that
/// no two purposes share key material.
public struct ServerSecret: Sendable {
    private let sealingKey: SymmetricKey
    private let successorKey: SymmetricKey
    private let codeKey: SymmetricKey
    private let csrfKey: SymmetricKey
    private let pairwiseKey: SymmetricKey

    public init(bytes: [UInt8]) throws {
        guard bytes.count >= 32 else { throw ServerSecretError.tooShort }
        let master = SymmetricKey(data: bytes)
        func derive(_ info: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: master, salt: Data("gatehouse".utf8), info: Data(info.utf8), outputByteCount: 32)
        }
        sealingKey = derive("seal:v1")
        successorKey = derive("refresh-successor:v1")
        codeKey = derive("one-time-code:v1")
        csrfKey = derive("csrf:v1")
        pairwiseKey = derive("pairwise-subject:v1")
    }

    /// Reads the secret file, creating it (0600, 256 random bits) when missing.
    public static func loadOrCreate(path: String) throws -> ServerSecret {
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) { try create(path: path) }
        guard let contents = fm.contents(atPath: path) else { throw ServerSecretError.unreadable(path) }
        let text = String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: text) else { throw ServerSecretError.malformed(path) }
        return try ServerSecret(bytes: Array(bytes))
    }

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
        let fresh = Array((Data(Secrets.randomBytes(32)).base64EncodedString() + "\n").utf8)
        let written = fresh.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == fresh.count, fsync(descriptor) == 0 else { throw ServerSecretError.unwritable(path) }
    }

    /// AES-GCM seals `plaintext`; the result is base64 of nonce‖ciphertext‖tag.
    public func seal(_ plaintext: Data) throws -> String {
        try AES.GCM.seal(plaintext, using: sealingKey).combined!.base64EncodedString()
    }

    public func open(_ sealed: String) throws -> Data {
        guard let combined = Data(base64Encoded: sealed) else { throw ServerSecretError.malformed("sealed box") }
        return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: sealingKey)
    }

    /// The deterministic successor of a refresh token, so a retry inside the grace interval gets the same
    /// successor without the server ever storing a plaintext token.
    public func refreshSuccessor(of token: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: successorKey)
        return RefreshTokenFormat.prefix + Base64URL.encode(Array(mac))
    }

    /// The form token that goes with a CSRF cookie nonce: a forged form cannot know it, and the server
    /// keeps no state for it.
    public func csrfToken(for nonce: String) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Data(nonce.utf8), using: csrfKey)))
    }

    /// A pairwise subject identifier (OIDC Core §8.1): the same user and sector always give the same
    /// value, and no one without the secret can link two sectors' values or recover the user id. It
    /// follows the secret: replacing the secret file changes every pairwise subject.
    public func pairwiseSubject(userID: String, sector: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data((sector + "\u{0}" + userID).utf8), using: pairwiseKey)
        return Base64URL.encode(Array(mac))
    }

    /// Keyed hash for short codes: a plain SHA-256 of a 6-digit code is reversed by trying all million.
    public func codeHash(_ code: String, binding: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data((binding + "\u{0}" + code).utf8), using: codeKey)
        return Secrets.hex(Array(mac))
    }
}

public enum RefreshTokenFormat {
    public static let prefix = "gh_r_"
}

public enum ServerSecretError: Error, CustomStringConvertible {
    case tooShort
    case unreadable(String)
    case unwritable(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .tooShort: "the server secret must hold at least 32 bytes"
        case .unreadable(let p): "cannot read the server secret at \(p)"
        case .unwritable(let p): "cannot create the server secret at \(p)"
        case .malformed(let p): "the server secret at \(p) is not base64"
        }
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
