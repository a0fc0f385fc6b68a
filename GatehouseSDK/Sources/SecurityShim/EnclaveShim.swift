// Stand-ins for the Secure Enclave (CryptoKit), access control (Security) and LocalAuthentication
// calls that `SecureEnclaveBiometricKeys` makes, with Apple's names, so its code is compiled and
// tested on Linux (GATEHOUSE_SECURITY_SHIM=1 only). The "enclave" is a software P-256 key, and the
// "biometric prompt" is SecurityShimControl.setBiometricsPass. Hand-written: no package offers this.
import Crypto
import Foundation

/// Apple's `CFError`: a class, so `Unmanaged<CFError>` works as it does there.
public final class CFError: Error, Sendable {}

public final class SecAccessControl: Sendable {
    public let flags: SecAccessControlCreateFlags
    init(flags: SecAccessControlCreateFlags) { self.flags = flags }
}

public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
}

/// Apple's takes `CFTypeRef` for the protection class; a `CFString` is one there. Here the class is
/// a `String`, which is not an object, so the parameter is `Any`.
public func SecAccessControlCreateWithFlags(
    _ allocator: AnyObject?, _ protection: Any, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    guard
        protection as? String == kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            || protection as? String == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
    else {
        error?.pointee = Unmanaged.passRetained(CFError())
        return nil
    }
    return SecAccessControl(flags: flags)
}

public enum LAPolicy: Sendable {
    case deviceOwnerAuthenticationWithBiometrics
    case deviceOwnerAuthentication
}

/// Apple's `LAContext`: the reason shown in the prompt, and whether biometrics can be used.
public final class LAContext {
    public var localizedReason: String = ""
    public init() {}

    public func canEvaluatePolicy(_ policy: LAPolicy, error: UnsafeMutablePointer<NSError?>?) -> Bool {
        ShimEnclave.shared.state.withLock { $0.available }
    }
}

/// The prompt was refused (Apple's `LAError.userCancel` plays this part there).
public struct ShimBiometricRefusal: Error, Sendable {}

public enum SecureEnclave {
    public static var isAvailable: Bool { ShimEnclave.shared.state.withLock { $0.available } }

    public enum P256 {
        public enum Signing {
            public struct PrivateKey: Sendable {
                private let key: Crypto.P256.Signing.PrivateKey
                /// What CryptoKit returns is an encrypted handle only the enclave opens; here, the raw
                /// key behind a marker, so a handle from elsewhere is refused as it would be.
                public var dataRepresentation: Data { ShimEnclave.marker + key.rawRepresentation }
                public var publicKey: Crypto.P256.Signing.PublicKey { key.publicKey }

                public init(accessControl: SecAccessControl) throws {
                    guard accessControl.flags.contains(.privateKeyUsage) else { throw CFError() }
                    key = Crypto.P256.Signing.PrivateKey()
                }

                public init(dataRepresentation: Data, authenticationContext: LAContext? = nil) throws {
                    guard dataRepresentation.starts(with: ShimEnclave.marker) else { throw CFError() }
                    key = try Crypto.P256.Signing.PrivateKey(rawRepresentation: dataRepresentation.dropFirst(ShimEnclave.marker.count))
                    if let authenticationContext {
                        ShimEnclave.shared.state.withLock { $0.lastReason = authenticationContext.localizedReason }
                    }
                }

                /// Signs after the "prompt", which SecurityShimControl decides.
                public func signature<D: DataProtocol>(for data: D) throws -> Crypto.P256.Signing.ECDSASignature {
                    guard ShimEnclave.shared.state.withLock({ $0.biometricsPass }) else { throw ShimBiometricRefusal() }
                    return try key.signature(for: data)
                }
            }
        }
    }
}

extension SecurityShimControl {
    /// Whether the device offers biometrics (and a Secure Enclave).
    public static func setBiometricsAvailable(_ available: Bool) { ShimEnclave.shared.state.withLock { $0.available = available } }
    /// Whether the next prompts pass.
    public static func setBiometricsPass(_ pass: Bool) { ShimEnclave.shared.state.withLock { $0.biometricsPass = pass } }
    /// The reason the last prompt showed.
    public static var lastPromptReason: String { ShimEnclave.shared.state.withLock { $0.lastReason } }
}

/// The stand-in's settings, behind one lock.
final class ShimEnclave: Sendable {
    static let shared = ShimEnclave()
    static let marker = Data("shim-enclave:".utf8)

    struct State {
        var available = true
        var biometricsPass = true
        var lastReason = ""
    }

    let state = Locked(State())
}
