import Crypto
import Foundation
import GatehouseAPI

/// Device authenticators (PIN, biometric, custom): a P-256 public key bound to one client and one
/// device, identifier `device:key id`. A sign-in is a signature over a single-use challenge; the
/// server counts the failures, so a stolen device can only guess against the server.
public struct DeviceAuthenticatorStrategy: CredentialStrategy {
    public struct Submission: Sendable {
        public var deviceID: String
        public var keyID: String
        public var clientID: String
        /// The exact bytes that were to be signed (``DeviceSignature``).
        public var message: Data
        public var signature: Data

        public init(deviceID: String, keyID: String, clientID: String, message: Data, signature: Data) {
            self.deviceID = deviceID
            self.keyID = keyID
            self.clientID = clientID
            self.message = message
            self.signature = signature
        }
    }

    /// The config of a device authenticator (version 1): no secret, only the public half.
    public struct Config: Codable, Sendable {
        public var kind: AuthenticatorType
        public var customType: String?
        public var clientID: String
        public var deviceID: String
        public var deviceName: String?
        public var keyID: String
        /// X9.63 public key, base64url.
        public var publicKey: String
        /// Registered from a sign-in that had passed a second factor: a sign-in with it counts as two
        /// factors (the device's key, and the PIN or biometric that unlocks it). One registered from a
        /// one-factor session does not, so a key added with a session stolen before the user enrolled
        /// a factor cannot stand in for that factor.
        public var multiFactor: Bool?

        enum CodingKeys: String, CodingKey {
            case kind
            case customType = "custom_type"
            case multiFactor = "multi_factor"
            case clientID = "client_id"
            case deviceID = "device_id"
            case deviceName = "device_name"
            case keyID = "key_id"
            case publicKey = "public_key"
        }
    }

    public init() {}

    public var type: CredentialType { .deviceAuthenticator }
    public var amr: [String] { [] }
    /// A device key proves possession of the device, not the email address.
    public var provesIdentifier: Bool { false }

    public static func identifier(deviceID: String, keyID: String) -> String { "\(deviceID):\(keyID)" }

    public func identifier(of submission: Submission) throws -> String {
        guard DeviceFields.isDeviceID(submission.deviceID), DeviceFields.isKeyID(submission.keyID) else {
            throw GatehouseError.deviceDeregistered()
        }
        return Self.identifier(deviceID: submission.deviceID, keyID: submission.keyID)
    }

    /// Nothing: the identifier holds the key's hash (threat model §3.16). Hooks get the user's id.
    public func shownIdentifier(of submission: Submission) -> String? { nil }

    public func verify(_ submission: Submission, against credential: CredentialRecord) async throws -> CredentialVerification {
        guard let config = try? credential.decodeConfig(Config.self), config.clientID == submission.clientID,
            let key = Self.publicKey(config.publicKey)
        else { return .rejected }
        return Self.isValid(submission.signature, of: submission.message, by: key) ? .verified(upgradedConfig: nil) : .rejected
    }

    public func verifyUnknown(_ submission: Submission) async throws {
        // One verification against a throwaway key: the same work as a known authenticator.
        _ = Self.isValid(submission.signature, of: submission.message, by: Self.dummyKey)
    }

    public func amr(for credential: CredentialRecord) -> [String] {
        guard let config = try? credential.decodeConfig(Config.self) else { return ["hwk"] }
        // A custom authenticator's check is the app's own: Gatehouse cannot say what it proves.
        guard config.multiFactor == true, config.kind != .custom else { return [config.kind.amr] }
        // RFC 8176: the key proves possession (in the Secure Enclave behind a biometric; derived in
        // software behind a PIN), the PIN knowledge and the biometric inherence.
        let possession = config.kind == .biometric ? "hwk" : "swk"
        return [config.kind.amr, possession, AuthenticationMethod.multiFactor]
    }

    public func failureLimit(for credential: CredentialRecord, client: ClientRecord) -> Int? {
        client.settings.maxFailureCount
    }

    /// The per-authenticator limit (counted before each check) is far stricter than the account
    /// throttle, and an authenticator id is a random 122 bits: nothing to enumerate by address.
    public var usesSignInThrottle: Bool { false }

    /// A P-256 key from base64url X9.63 (what the SDK sends) or DER.
    public static func publicKey(_ base64URL: String) -> P256.Signing.PublicKey? {
        guard let data = Base64URL.decode(base64URL) else { return nil }
        if let key = try? P256.Signing.PublicKey(x963Representation: data) { return key }
        return try? P256.Signing.PublicKey(derRepresentation: data)
    }

    /// The key id: base64url SHA-256 of the X9.63 public key.
    public static func keyID(of key: P256.Signing.PublicKey) -> String {
        Base64URL.encode(Data(SHA256.hash(data: key.x963Representation)))
    }

    /// Raw `r‖s` (what CryptoKit and swift-crypto give) or DER (what `SecKeyCreateSignature` gives).
    static func isValid(_ signature: Data, of message: Data, by key: P256.Signing.PublicKey) -> Bool {
        let parsed: P256.Signing.ECDSASignature?
        if signature.count == 64 {
            parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        } else {
            parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        }
        guard let parsed else { return false }
        return key.isValidSignature(parsed, for: message)
    }

    private static let dummyKey = P256.Signing.PrivateKey().publicKey
}

/// Shapes of the fields that name a device and a key.
public enum DeviceFields {
    static let deviceIDCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
    static let customTypeCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789_-")

    public static let deviceIDRule = "Use 8 to 128 of the characters A-Z, a-z, 0-9, '.', '_' and '-'."

    public static func isDeviceID(_ value: String) -> Bool {
        (8...128).contains(value.count) && value.allSatisfy(deviceIDCharacters.contains)
    }

    /// A base64url SHA-256: 43 characters.
    public static func isKeyID(_ value: String) -> Bool {
        value.count == 43 && value.allSatisfy(deviceIDCharacters.contains)
    }

    public static func isCustomType(_ value: String) -> Bool {
        (1...64).contains(value.count) && value.allSatisfy(customTypeCharacters.contains)
    }
}
