import Crypto
import Foundation

/// A signing key the device holds for a biometric or custom authenticator. On Apple platforms a
/// biometric key lives in the Secure Enclave; elsewhere (and in tests) a software key.
public protocol DeviceKey: Sendable {
    var publicKey: P256.Signing.PublicKey { get }
    /// What the store keeps to find the key again (an enclave blob, or the raw software key).
    var stored: Data { get }
    /// Signs, after whatever check the key requires (a biometric prompt with `reason`).
    func sign(_ message: Data, reason: String) async throws -> Data
}

/// Makes and reloads the keys of biometric authenticators.
public protocol BiometricKeyProvider: Sendable {
    /// Whether the device can offer a biometric authenticator now.
    var isAvailable: Bool { get }
    func makeKey() throws -> any DeviceKey
    func loadKey(_ stored: Data) throws -> any DeviceKey
}

/// A P-256 key held in memory and kept raw in the ``DeviceStore``: for Linux, for custom
/// authenticators, and for tests. Its protection is the store's (Keychain, 0600 file).
public struct SoftwareDeviceKey: DeviceKey {
    // The raw scalar, not the key object: plain bytes are Sendable on every platform, while CryptoKit's
    // key types are not declared so in every SDK this package supports.
    let raw: Data

    public init() { raw = P256.Signing.PrivateKey().rawRepresentation }

    /// A key from its raw representation; throws for bytes that are not a P-256 scalar.
    public init(stored: Data) throws {
        raw = try P256.Signing.PrivateKey(rawRepresentation: stored).rawRepresentation
    }

    init(_ key: P256.Signing.PrivateKey) { raw = key.rawRepresentation }

    var key: P256.Signing.PrivateKey {
        // `raw` was produced by, or checked with, this same initializer.
        try! P256.Signing.PrivateKey(rawRepresentation: raw)
    }

    public var publicKey: P256.Signing.PublicKey { key.publicKey }
    public var stored: Data { raw }
    public func sign(_ message: Data, reason: String) async throws -> Data {
        try key.signature(for: message).rawRepresentation
    }
}

/// Software keys standing in for biometrics where there is no Secure Enclave. `check` plays the
/// biometric prompt: it returns whether the user passed.
public struct SoftwareBiometricKeys: BiometricKeyProvider {
    let check: @Sendable (String) async -> Bool

    public init(check: @escaping @Sendable (String) async -> Bool = { _ in true }) { self.check = check }

    public var isAvailable: Bool { true }
    public func makeKey() throws -> any DeviceKey { Gated(key: SoftwareDeviceKey(), check: check) }
    public func loadKey(_ stored: Data) throws -> any DeviceKey { Gated(key: try SoftwareDeviceKey(stored: stored), check: check) }

    struct Gated: DeviceKey {
        let key: SoftwareDeviceKey
        let check: @Sendable (String) async -> Bool
        var publicKey: P256.Signing.PublicKey { key.publicKey }
        var stored: Data { key.stored }
        func sign(_ message: Data, reason: String) async throws -> Data {
            guard await check(reason) else { throw DeviceAuthenticationError.cancelled }
            return try await key.sign(message, reason: reason)
        }
    }
}

#if (canImport(LocalAuthentication) && canImport(CryptoKit) && (os(iOS) || os(macOS))) || GATEHOUSE_SECURITY_SHIM
    #if canImport(LocalAuthentication) && canImport(CryptoKit)
        import CryptoKit
        import LocalAuthentication
        import Security
    #else
        // Linux type-check builds only (GATEHOUSE_SECURITY_SHIM): the same calls against stand-ins.
        import SecurityShim
    #endif

    /// Secure Enclave keys that sign only after Face ID or Touch ID (the current enrolment: a new
    /// fingerprint invalidates the key). The private key never leaves the enclave; the store keeps the
    /// enclave's encrypted handle.
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, *)
    public struct SecureEnclaveBiometricKeys: BiometricKeyProvider {
        public init() {}

        public var isAvailable: Bool {
            SecureEnclave.isAvailable && LAContext().canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil)
        }

        public func makeKey() throws -> any DeviceKey {
            try EnclaveKey.make(accessibility: kSecAttrAccessibleWhenUnlockedThisDeviceOnly, flags: .biometryCurrentSet, asksUser: true)
        }

        public func loadKey(_ stored: Data) throws -> any DeviceKey { try EnclaveKey.load(stored, asksUser: true) }
    }
#endif
