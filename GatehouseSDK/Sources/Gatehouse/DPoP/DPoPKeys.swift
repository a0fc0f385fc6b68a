import Crypto
import Foundation

/// Makes and reloads the key the SDK signs DPoP proofs with (RFC 9449): the key that binds a session's
/// tokens to this device. One key per session; a new sign-in makes a new one.
public protocol DPoPKeyProvider: Sendable {
    func makeKey() throws -> any DeviceKey
    func loadKey(_ stored: Data) throws -> any DeviceKey
}

/// A software P-256 key kept in the session store (Keychain, or a `0600` file on Linux): the default
/// where there is no Secure Enclave, and in tests.
public struct SoftwareDPoPKeys: DPoPKeyProvider {
    public init() {}
    public func makeKey() throws -> any DeviceKey { SoftwareDeviceKey() }
    public func loadKey(_ stored: Data) throws -> any DeviceKey { try SoftwareDeviceKey(stored: stored) }
}

/// The key a stored session's tokens are bound to, as the session store keeps it: what it needs to
/// find the key again (raw bytes, or the enclave's encrypted handle).
public struct StoredDPoPKey: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// A ``SoftwareDeviceKey``: the raw scalar.
        case software
        /// A key of the configured ``DPoPKeyProvider`` (the Secure Enclave's handle): its `loadKey` reads it.
        case platform
    }

    public var kind: Kind
    public var data: Data

    public init(kind: Kind, data: Data) {
        self.kind = kind
        self.data = data
    }
}

#if (canImport(CryptoKit) && canImport(Security) && (os(iOS) || os(macOS))) || GATEHOUSE_SECURITY_SHIM
    #if canImport(CryptoKit) && canImport(Security)
        import CryptoKit
        import Security
    #else
        // Linux type-check builds only (GATEHOUSE_SECURITY_SHIM): the same calls against stand-ins.
        import SecurityShim
    #endif

    /// Secure Enclave keys for DPoP: the private key never leaves the enclave, so a session copied off
    /// the device (a backup, malware reading the Keychain) cannot refresh or use its tokens. No
    /// biometric prompt: proofs are signed on every request, in the background too, so the key is
    /// usable after the first unlock. Falls back to a software key where there is no enclave (the
    /// Simulator).
    @available(iOS 13.0, macOS 10.15, *)
    public struct SecureEnclaveDPoPKeys: DPoPKeyProvider {
        public init() {}

        public func makeKey() throws -> any DeviceKey {
            guard SecureEnclave.isAvailable else { return SoftwareDeviceKey() }
            return try EnclaveKey.make(accessibility: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, flags: [], asksUser: false)
        }

        public func loadKey(_ stored: Data) throws -> any DeviceKey { try EnclaveKey.load(stored, asksUser: false) }
    }
#endif

/// Whether the SDK binds tokens to a key of this device.
public enum DPoPSetting: Sendable, Hashable {
    /// When the server's discovery document lists ES256 in `dpop_signing_alg_values_supported`.
    case automatic
    /// Never: bearer tokens, as before DPoP.
    case off
}

extension AuthClient.Configuration {
    /// The Secure Enclave where there is one (iOS and macOS), a software key elsewhere.
    public static var defaultDPoPKeys: any DPoPKeyProvider {
        #if canImport(CryptoKit) && canImport(Security) && (os(iOS) || os(macOS))
            if #available(iOS 13.0, macOS 10.15, *) { return SecureEnclaveDPoPKeys() }
        #endif
        return SoftwareDPoPKeys()
    }
}

extension TokenResponse {
    /// The server bound these tokens to the proof's key.
    var isDPoP: Bool { tokenType.caseInsensitiveCompare("DPoP") == .orderedSame }
}
