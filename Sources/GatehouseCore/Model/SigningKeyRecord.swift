import Foundation

/// A token-signing key. The private part is sealed (AES-GCM) under the server secret.
public struct SigningKeyRecord: Sendable, Hashable {
    public var kid: String
    public var algorithm: String
    /// The public key as a JWK JSON object.
    public var publicJWK: String
    /// Base64 of the AES-GCM sealed box holding the raw private key.
    public var sealedPrivateKey: String
    public var createdAt: Date
    /// Set when a newer key became current; the key still verifies until `publishUntil`.
    public var retiredAt: Date?
    /// After this no token signed with the key can be valid, so it leaves the JWKS.
    public var publishUntil: Date?

    public init(
        kid: String, algorithm: String, publicJWK: String, sealedPrivateKey: String, createdAt: Date,
        retiredAt: Date? = nil, publishUntil: Date? = nil
    ) {
        self.kid = kid
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
        self.publishUntil = publishUntil
    }
}
