import Foundation

/// What every refresh token Gatehouse issues starts with.
public enum RefreshTokenFormat {
    public static let prefix = "gh_r_"
}

/// A refresh token of a session's chain: `gh_r_c.<session>.<generation>.<seed>.<mac>`. The session id
/// and a seed drawn at random when the session starts (16 bytes each, 22 base64url characters), the
/// generation in decimal, and an HMAC-SHA256 of the three under the server secret
/// (``ServerSecret/refreshChainToken(_:)``). The seed is in no database: the secret with a session id
/// gives no token, only the secret with a token of that chain does, as with row tokens' successors.
/// Row tokens are `gh_r_` and 43 base64url characters, which never hold a dot.
public struct RefreshChainToken: Sendable, Equatable {
    public let sessionID: UUID
    public let generation: Int
    let seed: [UInt8]
    /// The MAC as presented; empty for a token this server is about to format.
    let mac: [UInt8]

    static let marker = RefreshTokenFormat.prefix + "c."
    /// A chain cannot grow past this: a refresh a second for thirty years is 10⁹.
    static let maxGeneration = 1_000_000_000

    init(sessionID: UUID, generation: Int, seed: [UInt8], mac: [UInt8] = []) {
        self.sessionID = sessionID
        self.generation = generation
        self.seed = seed
        self.mac = mac
    }

    /// Generation 0 of a new chain.
    public static func first(of session: UUID) -> RefreshChainToken {
        RefreshChainToken(sessionID: session, generation: 0, seed: Secrets.randomBytes(16))
    }

    /// The next generation of the same chain.
    public var successor: RefreshChainToken { RefreshChainToken(sessionID: sessionID, generation: generation + 1, seed: seed) }

    /// An earlier or later generation of the same chain.
    public func generation(_ generation: Int) -> RefreshChainToken {
        RefreshChainToken(sessionID: sessionID, generation: generation, seed: seed)
    }

    /// The parts of a chain token, or nil for anything else (a row token included). Says nothing of
    /// whether the token is genuine.
    public init?(parsing token: String) {
        guard token.hasPrefix(Self.marker) else { return nil }
        let parts = token.dropFirst(Self.marker.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, let id = Base64URL.decode(String(parts[0])), id.count == 16,
            parts[1].count <= 10, parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let generation = Int(parts[1]), generation <= Self.maxGeneration,
            String(generation) == parts[1],  // one spelling: no leading zeros
            let seed = Base64URL.decode(String(parts[2])), seed.count == 16,
            let mac = Base64URL.decode(String(parts[3])), mac.count == 32
        else { return nil }
        let uuid = id.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
        self.init(sessionID: UUID(uuid: uuid), generation: generation, seed: seed, mac: mac)
    }

    /// The bytes the MAC covers.
    var signedBytes: [UInt8] {
        var message = Array("gatehouse-refresh-chain\u{0}".utf8)
        withUnsafeBytes(of: sessionID.uuid) { message.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(generation).bigEndian) { message.append(contentsOf: $0) }
        message.append(contentsOf: seed)
        return message
    }

    func formatted(mac: [UInt8]) -> String {
        let id = withUnsafeBytes(of: sessionID.uuid) { Base64URL.encode(Array($0)) }
        return Self.marker + id + "." + String(generation) + "." + Base64URL.encode(seed) + "." + Base64URL.encode(mac)
    }
}
