import Foundation

/// What protects a device authenticator's private key on the device.
public enum AuthenticatorType: String, Codable, Hashable, Sendable, CaseIterable {
    /// A key that only a PIN (through a camouflaged key derivation) turns into the right key.
    case pin
    /// A key behind the platform's biometric check (Secure Enclave on Apple platforms).
    case biometric
    /// An app-defined authenticator, named by `custom_type`.
    case custom

    /// What a session started with this authenticator reports in `amr`.
    public var amr: String {
        switch self {
        case .pin: "pin"
        case .biometric: "bio"
        case .custom: "custom"
        }
    }
}

/// `POST /v1/me/authenticators`: a signed-in user binds a device key to the client they signed in with.
public struct AuthenticatorRegistration: Codable, Hashable, Sendable {
    public var type: AuthenticatorType
    /// Required for `custom`: the app's name for its authenticator (`[a-z0-9_-]`, at most 64).
    public var customType: String?
    /// The app's identifier for this device installation (8–128 of `[A-Za-z0-9._-]`).
    public var deviceId: String
    /// A name people recognise in the sessions list ("Ada's iPhone").
    public var deviceName: String?
    /// The P-256 public key, uncompressed X9.63 (65 bytes), base64url without padding.
    public var publicKey: String

    public init(type: AuthenticatorType, customType: String? = nil, deviceId: String, deviceName: String? = nil, publicKey: String) {
        self.type = type
        self.customType = customType
        self.deviceId = deviceId
        self.deviceName = deviceName
        self.publicKey = publicKey
    }

    private enum CodingKeys: String, CodingKey {
        case type
        case customType = "custom_type"
        case deviceId = "device_id"
        case deviceName = "device_name"
        case publicKey = "public_key"
    }
}

/// A registered device authenticator, as `GET /v1/me/authenticators` lists it.
public struct AuthenticatorInfo: Codable, Hashable, Sendable {
    /// The authenticator's id, for `DELETE /v1/me/authenticators/{id}`.
    public var id: String
    public var type: AuthenticatorType
    public var customType: String?
    public var clientId: String
    public var deviceId: String
    public var deviceName: String?
    public var maxFailureCount: Int
    public var failureCount: Int
    public var createdAt: Date

    public init(
        id: String, type: AuthenticatorType, customType: String?, clientId: String, deviceId: String, deviceName: String?,
        maxFailureCount: Int, failureCount: Int, createdAt: Date
    ) {
        self.id = id
        self.type = type
        self.customType = customType
        self.clientId = clientId
        self.deviceId = deviceId
        self.deviceName = deviceName
        self.maxFailureCount = maxFailureCount
        self.failureCount = failureCount
        self.createdAt = createdAt
    }

    private enum CodingKeys: String, CodingKey {
        case id, type
        case customType = "custom_type"
        case clientId = "client_id"
        case deviceId = "device_id"
        case deviceName = "device_name"
        case maxFailureCount = "max_failure_count"
        case failureCount = "failure_count"
        case createdAt = "created_at"
    }
}

/// `GET /v1/me/authenticators`.
public struct AuthenticatorList: Codable, Hashable, Sendable {
    public var authenticators: [AuthenticatorInfo]
    public init(authenticators: [AuthenticatorInfo]) { self.authenticators = authenticators }
}

/// `POST /v1/authenticators/challenge`: asks for a nonce to sign. The authenticator is named by its
/// id, never by anything derived from its key: a device must hold nothing a PIN guess could be checked
/// against.
public struct DeviceChallengeRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var authenticatorId: String

    public init(clientId: String? = nil, authenticatorId: String) {
        self.clientId = clientId
        self.authenticatorId = authenticatorId
    }

    private enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
        case authenticatorId = "authenticator_id"
    }
}

/// The failure counts of a device authenticator: what a PIN challenge shows the user.
public struct FailureCounts: Codable, Hashable, Sendable {
    public var maxFailureCount: Int
    public var previousFailureCount: Int
    public var remainingFailureCount: Int

    public init(max: Int, previous: Int) {
        self.maxFailureCount = max
        self.previousFailureCount = previous
        self.remainingFailureCount = Swift.max(max - previous, 0)
    }

    private enum CodingKeys: String, CodingKey {
        case maxFailureCount = "max_failure_count"
        case previousFailureCount = "previous_failure_count"
        case remainingFailureCount = "remaining_failure_count"
    }
}

/// A single-use nonce to sign, with the authenticator's failure counts.
public struct DeviceChallenge: Codable, Hashable, Sendable {
    public var challengeId: String
    public var challenge: String
    public var expiresIn: Int
    public var maxFailureCount: Int
    public var previousFailureCount: Int
    public var remainingFailureCount: Int

    public init(challengeId: String, challenge: String, expiresIn: Int, counts: FailureCounts) {
        self.challengeId = challengeId
        self.challenge = challenge
        self.expiresIn = expiresIn
        self.maxFailureCount = counts.maxFailureCount
        self.previousFailureCount = counts.previousFailureCount
        self.remainingFailureCount = counts.remainingFailureCount
    }

    public var counts: FailureCounts { FailureCounts(max: maxFailureCount, previous: previousFailureCount) }

    private enum CodingKeys: String, CodingKey {
        case challenge
        case challengeId = "challenge_id"
        case expiresIn = "expires_in"
        case maxFailureCount = "max_failure_count"
        case previousFailureCount = "previous_failure_count"
        case remainingFailureCount = "remaining_failure_count"
    }
}

/// `POST /v1/authenticators/authenticate`: the signed challenge, answered with a token response.
public struct DeviceAuthenticationRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var challengeId: String
    /// ECDSA P-256 / SHA-256 over ``DeviceSignature/message(challengeID:challenge:clientID:deviceID:authenticatorID:)``,
    /// raw `r‖s` (64 bytes) or DER, base64url.
    public var signature: String
    public var scope: String?
    /// A custom authenticator's extra data, passed to the operator's hooks (at most 4,096 bytes).
    public var customData: String?

    public init(clientId: String? = nil, challengeId: String, signature: String, scope: String? = nil, customData: String? = nil) {
        self.clientId = clientId
        self.challengeId = challengeId
        self.signature = signature
        self.scope = scope
        self.customData = customData
    }

    private enum CodingKeys: String, CodingKey {
        case signature, scope
        case clientId = "client_id"
        case challengeId = "challenge_id"
        case customData = "custom_data"
    }
}

/// The bytes a device signs: bound to the challenge, the client and the authenticator, so a signature
/// is good for one sign-in of one authenticator at one client and nothing else.
public enum DeviceSignature {
    public static func message(challengeID: String, challenge: String, clientID: String, deviceID: String, authenticatorID: String) -> Data
    {
        Data(["gatehouse-device-auth-v1", challengeID, challenge, clientID, deviceID, authenticatorID].joined(separator: "\n").utf8)
    }
}

/// Which device authenticator started a session, in the sessions list.
public struct SessionAuthenticator: Codable, Hashable, Sendable {
    public var id: String
    public var type: AuthenticatorType
    public var deviceId: String
    public var deviceName: String?

    public init(id: String, type: AuthenticatorType, deviceId: String, deviceName: String?) {
        self.id = id
        self.type = type
        self.deviceId = deviceId
        self.deviceName = deviceName
    }

    private enum CodingKeys: String, CodingKey {
        case id, type
        case deviceId = "device_id"
        case deviceName = "device_name"
    }
}
