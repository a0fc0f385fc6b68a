import Argon2
import Crypto
import Foundation

/// A PIN authenticator's private key as the device keeps it: a random seed masked with a key derived
/// from the PIN (Argon2id). Unmasking with **any** PIN gives a seed, and every seed maps to a valid
/// P-256 key, so a wrong PIN yields a well-formed key that only the server can tell is wrong. Nothing
/// on the device (no public key, no key id, no MAC, no checksum) lets a thief test a guess offline;
/// every guess costs one of the server's few allowed failures.
///
/// Built from Argon2id, SHA-256 and XOR by hand: no listed package offers a camouflaged keystore, and
/// an authenticated cipher would be exactly the offline oracle this avoids.
public struct CamouflagedPINKey: Codable, Sendable, Hashable {
    /// Argon2id salt, 16 random bytes.
    var salt: Data
    /// seed ⊕ Argon2id(PIN, salt).
    var masked: Data
    var memoryKiB: UInt32
    var iterations: UInt32

    /// Creates a new key protected by `pin` (the PIN's policy is the caller's to check); returns the
    /// stored form and the key, whose public half is to be registered and which is then dropped.
    public static func create(pin: String, parameters: Argon2Parameters) throws -> (stored: CamouflagedPINKey, key: P256.Signing.PrivateKey)
    {
        var seed = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in seed.indices { seed[i] = generator.next() }
        var salt = [UInt8](repeating: 0, count: 16)
        for i in salt.indices { salt[i] = generator.next() }
        let mask = try Self.mask(pin: pin, salt: salt, parameters: parameters)
        let stored = CamouflagedPINKey(
            salt: Data(salt), masked: Data(zip(seed, mask).map { $0 ^ $1 }), memoryKiB: parameters.memoryKiB,
            iterations: parameters.iterations)
        return (stored, Self.key(fromSeed: seed))
    }

    /// The key this PIN unlocks: the right one for the right PIN, a valid but useless one otherwise.
    public func unlock(pin: String) throws -> P256.Signing.PrivateKey {
        let parameters = Argon2Parameters(memoryKiB: memoryKiB, iterations: iterations, parallelism: 1)
        let mask = try Self.mask(pin: pin, salt: [UInt8](salt), parameters: parameters)
        return Self.key(fromSeed: zip(masked, mask).map { $0 ^ $1 })
    }

    private static func mask(pin: String, salt: [UInt8], parameters: Argon2Parameters) throws -> [UInt8] {
        do {
            return try Argon2.hash(password: Array(pin.utf8), salt: salt, parameters: parameters, tagLength: 32)
        } catch {
            throw GatehouseError(code: "pin_derivation_failed", status: nil, message: "The PIN key could not be derived: \(error).")
        }
    }

    /// Every seed gives a key: hash it to a candidate scalar and try the next counter in the (about
    /// 2⁻³² likely) case that the candidate is not below the group order.
    static func key(fromSeed seed: [UInt8]) -> P256.Signing.PrivateKey {
        var counter: UInt8 = 0
        while true {
            var hasher = SHA256()
            hasher.update(data: Array("gatehouse-pin-key-v1".utf8))
            hasher.update(data: seed)
            hasher.update(data: [counter])
            if let key = try? P256.Signing.PrivateKey(rawRepresentation: Array(hasher.finalize())) { return key }
            counter &+= 1
        }
    }
}
