import Foundation

/// What every refresh token Gatehouse issues starts with.
public enum RefreshTokenFormat {
    public static let prefix = "gh_r_"
}

/// A refresh token of a session's chain: `gh_r_c.<session>.<generation>.<mac>`, the session id as 22
/// base64url characters, the generation in decimal and a 32-byte HMAC (``ServerSecret/verifies(_:)``).
/// Legacy refresh tokens are `gh_r_` and 43 base64url characters, which never hold a dot.
public struct RefreshChainToken: Sendable, Equatable {
    public let sessionID: UUID
    public let generation: Int
    /// The MAC as presented; empty for a token this server is about to format.
    let mac: [UInt8]

    static let marker = RefreshTokenFormat.prefix + "c."
    /// A chain cannot grow past this: a refresh a second for a year is 3 × 10⁷.
    static let maxGeneration = 1_000_000_000

    init(sessionID: UUID, generation: Int, mac: [UInt8] = []) {
        self.sessionID = sessionID
        self.generation = generation
        self.mac = mac
    }

    /// The parts of a chain token, or nil for anything else (a legacy token included). Says nothing of
    /// whether the token is genuine.
    public init?(parsing token: String) {
        guard token.hasPrefix(Self.marker) else { return nil }
        let parts = token.dropFirst(Self.marker.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let id = Base64URL.decode(String(parts[0])), id.count == 16,
            parts[1].count <= 10, parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let generation = Int(parts[1]), generation <= Self.maxGeneration,
            String(generation) == parts[1],  // one spelling: no leading zeros
            let mac = Base64URL.decode(String(parts[2])), mac.count == 32
        else { return nil }
        let uuid = id.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
        self.init(sessionID: UUID(uuid: uuid), generation: generation, mac: mac)
    }

    func formatted(mac: [UInt8]) -> String {
        let id = withUnsafeBytes(of: sessionID.uuid) { Base64URL.encode(Array($0)) }
        return Self.marker + id + "." + String(generation) + "." + Base64URL.encode(mac)
    }
}
