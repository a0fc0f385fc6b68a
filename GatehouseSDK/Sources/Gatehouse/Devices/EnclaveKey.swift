import Crypto
import Foundation

#if (canImport(LocalAuthentication) && canImport(CryptoKit) && canImport(Security) && (os(iOS) || os(macOS))) || GATEHOUSE_SECURITY_SHIM
    #if canImport(LocalAuthentication) && canImport(CryptoKit) && canImport(Security)
        import CryptoKit
        import LocalAuthentication
        import Security
    #else
        // Linux type-check builds only (GATEHOUSE_SECURITY_SHIM): the same calls against stand-ins.
        import SecurityShim
    #endif

    /// A P-256 key in the Secure Enclave as the stores keep it: the enclave's encrypted handle and the
    /// public key's bytes, plain data, so Sendable everywhere. The private key never leaves the enclave.
    /// The one kind of enclave key the SDK has: a biometric authenticator's (signing asks for Face ID
    /// or Touch ID) and the device key of DPoP and custom authenticators (signing asks nothing).
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, *)
    struct EnclaveKey: DeviceKey {
        let blob: Data
        let publicX963: Data
        /// Signing needs the user present (biometry): the key of a biometric authenticator.
        let asksUser: Bool

        init(_ key: SecureEnclave.P256.Signing.PrivateKey, asksUser: Bool) {
            blob = key.dataRepresentation
            publicX963 = key.publicKey.x963Representation
            self.asksUser = asksUser
        }

        /// A new enclave key usable while the device is in `accessibility`, with `flags` besides
        /// `.privateKeyUsage`.
        static func make(accessibility: CFString, flags: SecAccessControlCreateFlags, asksUser: Bool) throws -> EnclaveKey {
            var error: Unmanaged<CFError>?
            guard let access = SecAccessControlCreateWithFlags(nil, accessibility, flags.union(.privateKeyUsage), &error) else {
                throw error!.takeRetainedValue() as any Error
            }
            return EnclaveKey(try SecureEnclave.P256.Signing.PrivateKey(accessControl: access), asksUser: asksUser)
        }

        /// The key behind a stored handle; throws for a handle this device's enclave cannot open (one
        /// restored from another device's backup).
        static func load(_ stored: Data, asksUser: Bool) throws -> EnclaveKey {
            EnclaveKey(try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: stored), asksUser: asksUser)
        }

        var publicKey: P256.Signing.PublicKey {
            // The enclave's own public key, in the representation it was read from.
            try! P256.Signing.PublicKey(x963Representation: publicX963)
        }

        var stored: Data { blob }

        func sign(_ message: Data, reason: String) async throws -> Data {
            let key: SecureEnclave.P256.Signing.PrivateKey
            if asksUser {
                let context = LAContext()
                context.localizedReason = reason
                key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob, authenticationContext: context)
            } else {
                key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: blob)
            }
            return try key.signature(for: message).rawRepresentation
        }
    }
#endif
