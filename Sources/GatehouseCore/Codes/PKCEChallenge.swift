import Crypto
import Foundation

/// A PKCE (RFC 7636) challenge. Only S256: `plain` gives no protection against a stolen code.
public struct PKCEChallenge: Sendable, Hashable, Codable {
    public var challenge: String
    public var method: String

    public init?(challenge: String, method: String) {
        guard method == "S256", (43...128).contains(challenge.count),
            challenge.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
        else { return nil }
        self.challenge = challenge
        self.method = method
    }

    public func verify(verifier: String) -> Bool {
        guard (43...128).contains(verifier.count) else { return false }
        let digest = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
        return Secrets.constantTimeEquals(digest, challenge)
    }
}
