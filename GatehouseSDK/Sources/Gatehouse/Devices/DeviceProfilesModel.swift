import Foundation
import GatehouseAPI

/// A user who set up this device: several can live on one device, each with its own authenticators
/// and secrets. Contains nothing secret and nothing derived from a key.
public struct UserProfile: Codable, Sendable, Hashable, Identifiable {
    /// Local id of the profile.
    public var id: String
    /// The server's user id.
    public var userID: String
    public var email: String?
    public var authenticators: [RegisteredAuthenticator]

    public init(id: String, userID: String, email: String?, authenticators: [RegisteredAuthenticator]) {
        self.id = id
        self.userID = userID
        self.email = email
        self.authenticators = authenticators
    }
}

/// One of a profile's authenticators as the device knows it: the server's id and the type, never the
/// public key or its hash.
public struct RegisteredAuthenticator: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var type: AuthenticatorType
    public var customType: String?

    public init(id: String, type: AuthenticatorType, customType: String?) {
        self.id = id
        self.type = type
        self.customType = customType
    }
}

/// How a device authentication ended other than with a server error.
public enum DeviceAuthenticationError: Error, Sendable, Equatable {
    /// The user or the delegate cancelled.
    case cancelled
    /// No such profile or authenticator on this device.
    case unknownProfile
    /// The PIN does not meet the ``PINPolicy``.
    case pinPolicy(ValidationResult)
    /// The authenticator was deleted on the server (its last allowed failure, or removed elsewhere)
    /// and is gone from the device: sign in and register again.
    case deregistered
    /// Biometrics are not available on this device.
    case biometricsUnavailable
    /// No ``CustomAuthenticator`` of this type was given to ``DeviceProfiles``.
    case unknownCustomType(String)
}

/// Everything the device keeps: its id, its profiles, and per authenticator the key material.
public struct DeviceState: Codable, Sendable, Equatable {
    /// A random id for this installation, sent as `device_id`.
    public var deviceID: String
    public var profiles: [UserProfile]
    /// The profile whose session the ``AuthClient`` holds, if any.
    public var activeProfileID: String?
    /// The authenticator the active profile's session was started with (its deletion ends the session).
    var activeAuthenticatorID: String?
    /// Key material by authenticator id.
    var keys: [String: KeyMaterial]

    public init(deviceID: String = "dev_" + UUID().uuidString.lowercased()) {
        self.deviceID = deviceID
        self.profiles = []
        self.activeProfileID = nil
        self.activeAuthenticatorID = nil
        self.keys = [:]
    }

    /// Exactly one of these is set.
    struct KeyMaterial: Codable, Sendable, Equatable {
        var pin: CamouflagedPINKey?
        /// A biometric key's stored form (enclave handle or software key).
        var biometric: Data?
        /// A custom authenticator's key: raw, or the enclave's handle (see `customKind`).
        var custom: Data?
        /// How `custom` is kept; nil for keys registered before it was written, which are software keys.
        var customKind: StoredDPoPKey.Kind?
    }
}
