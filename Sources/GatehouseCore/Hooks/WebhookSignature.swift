import Crypto
import Foundation

/// Standard Webhooks signing (https://www.standardwebhooks.com): `v1,` + base64 of HMAC-SHA256 over
/// `id.timestamp.body`, keyed with the bytes of a `whsec_`-prefixed base64 secret. Several secrets
/// sign side by side (space-separated), so a receiver can move to a new secret while the old one
/// still verifies. Written here because no listed Swift package implements the scheme; the tests
/// check it against the reference implementation from PyPI.
public struct WebhookSecret: Sendable, Hashable {
    let key: SymmetricKey

    /// `whsec_<base64>`; at least 24 bytes of key.
    public init(_ text: String) throws {
        guard text.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(text.dropFirst(6))), bytes.count >= 24
        else { throw WebhookSecretError.malformed }
        key = SymmetricKey(data: bytes)
    }

    /// A fresh secret, for `gatehouse hooks secret`.
    public static func generate() -> String {
        "whsec_" + Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64EncodedString()
    }

    public static func == (lhs: WebhookSecret, rhs: WebhookSecret) -> Bool { lhs.key == rhs.key }
    public func hash(into hasher: inout Hasher) { key.withUnsafeBytes { hasher.combine(bytes: $0) } }
}

public enum WebhookSecretError: Error, CustomStringConvertible {
    case malformed
    public var description: String {
        "a webhook secret is whsec_ followed by at least 24 bytes in base64 (gatehouse hooks secret makes one)"
    }
}

public enum WebhookSignature {
    /// The three headers of a signed request.
    public static func headers(id: String, timestamp: Date, body: Data, secrets: [WebhookSecret]) -> [(String, String)] {
        let seconds = String(Int(timestamp.timeIntervalSince1970))
        var signed = Data("\(id).\(seconds).".utf8)
        signed.append(body)
        let signatures = secrets.map { secret in
            "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: secret.key)).base64EncodedString()
        }
        return [("webhook-id", id), ("webhook-timestamp", seconds), ("webhook-signature", signatures.joined(separator: " "))]
    }
}
