import Argon2
import Crypto
import CryptoExtras
import Foundation

/// A password hash made by a system users move in from, verified once at the user's next sign-in and
/// then replaced by Argon2id (``PasswordHasher``). The key derivations are swift-crypto's (PBKDF2,
/// scrypt, AES-CTR over BoringSSL) and this package's Argon2; what is written here is only how each
/// system lays its hash out, and the bounds on its costs: a stored hash is data, and an import must
/// not be able to make a sign-in take seconds.
///
/// The stored forms (``UserImport`` writes them from each export):
/// - Django: `pbkdf2_sha256$<iterations>$<salt>$<base64 hash>` (and `pbkdf2_sha1`), as Django stores it;
/// - Keycloak: `$pbkdf2-sha256$i=<iterations>$<base64 salt>$<base64 hash>` (and `-sha512`, `$pbkdf2$`
///   for SHA-1), from its `credentialData` and `secretData`;
/// - scrypt as passlib writes it: `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>` (adapted base64);
/// - Firebase's modified scrypt: `$firebase-scrypt$r=<rounds>,m=<mem cost>$<salt>$<salt separator>$<signer key>$<hash>`
///   (standard base64; the project's signer key travels with each hash until it is replaced);
/// - Argon2i and Argon2d PHC strings.
enum ForeignPasswordHash: Sendable {
    case pbkdf2(KDF.Insecure.PBKDF2.HashFunction, iterations: Int, salt: [UInt8], hash: [UInt8])
    case scrypt(n: Int, r: Int, p: Int, salt: [UInt8], hash: [UInt8])
    case firebaseScrypt(rounds: Int, memoryCost: Int, salt: [UInt8], separator: [UInt8], signerKey: [UInt8], hash: [UInt8])
    case argon2(Argon2PHC)

    /// The most PBKDF2 iterations verified: Django 5.2's own default (1,000,000 of SHA-256) with room.
    static let maximumPBKDF2Iterations = 1_200_000
    /// scrypt's memory (128 · N · r · p bytes) at most 128 MiB, passlib's default being 16 MiB.
    static let maximumScryptBytes = 128 << 20

    /// Nil when `stored` is none of the forms above, or asks for more work than the bounds allow.
    init?(_ stored: String) {
        guard stored.utf8.count <= 1024 else { return nil }
        let parsed: ForeignPasswordHash?
        if stored.hasPrefix("pbkdf2_") {
            parsed = Self.django(stored)
        } else if stored.hasPrefix("$pbkdf2") {
            parsed = Self.keycloak(stored)
        } else if stored.hasPrefix("$scrypt$") {
            parsed = Self.passlibScrypt(stored)
        } else if stored.hasPrefix("$firebase-scrypt$") {
            parsed = Self.firebase(stored)
        } else if stored.hasPrefix("$argon2i$") || stored.hasPrefix("$argon2d$") {
            parsed = (try? Argon2PHC(stored, variants: [.i, .d])).map(ForeignPasswordHash.argon2)
        } else {
            parsed = nil
        }
        guard let parsed, parsed.isAffordable else { return nil }
        self = parsed
    }

    var isAffordable: Bool {
        switch self {
        case .pbkdf2(_, let iterations, _, let hash): return (1...Self.maximumPBKDF2Iterations).contains(iterations) && hash.count >= 16
        case .scrypt(let n, let r, let p, _, let hash):
            return n > 1 && n & (n - 1) == 0 && r >= 1 && p >= 1 && p <= 16 && 128 * n * r * p <= Self.maximumScryptBytes
                && hash.count >= 16
        case .firebaseScrypt(let rounds, let memoryCost, _, _, let signerKey, let hash):
            return (1...16).contains(rounds) && (1...20).contains(memoryCost) && 128 * (1 << memoryCost) * rounds <= Self.maximumScryptBytes
                && !signerKey.isEmpty && hash.count == signerKey.count
        case .argon2(let phc):
            return phc.parameters.isAffordable(policy: .owaspDefault)
        }
    }

    /// Whether `password` is the one hashed. CPU-bound: call on the hashing pool.
    func verify(_ password: String) -> Bool {
        let secret = Data(password.utf8)
        switch self {
        case .pbkdf2(let function, let iterations, let salt, let hash):
            guard
                let key = try? KDF.Insecure.PBKDF2.deriveKey(
                    from: secret, salt: salt, using: function, outputByteCount: hash.count, unsafeUncheckedRounds: iterations)
            else { return false }
            return Secrets.constantTimeEquals(key.withUnsafeBytes { Array($0) }, hash)
        case .scrypt(let n, let r, let p, let salt, let hash):
            guard let key = Self.scrypt(secret, salt: salt, n: n, r: r, p: p, length: hash.count) else { return false }
            return Secrets.constantTimeEquals(key, hash)
        case .firebaseScrypt(let rounds, let memoryCost, let salt, let separator, let signerKey, let hash):
            // Firebase's variant: the scrypt key encrypts the project's signer key under AES-256-CTR
            // with a zero counter block, and that ciphertext is the stored hash.
            guard let key = Self.scrypt(secret, salt: salt + separator, n: 1 << memoryCost, r: rounds, p: 1, length: 32),
                let nonce = try? AES._CTR.Nonce(nonceBytes: [UInt8](repeating: 0, count: 16)),
                let sealed = try? AES._CTR.encrypt(signerKey, using: SymmetricKey(data: key), nonce: nonce)
            else { return false }
            return Secrets.constantTimeEquals(Array(sealed), hash)
        case .argon2(let phc):
            return (try? phc.verify(password: password)) ?? false
        }
    }

    private static func scrypt(_ secret: Data, salt: [UInt8], n: Int, r: Int, p: Int, length: Int) -> [UInt8]? {
        guard
            let key = try? KDF.Scrypt.deriveKey(
                from: secret, salt: salt, outputByteCount: length, rounds: n, blockSize: r, parallelism: p,
                maxMemory: maximumScryptBytes + (1 << 20))
        else { return nil }
        return key.withUnsafeBytes { Array($0) }
    }

    // MARK: - The stored forms

    private static func django(_ stored: String) -> ForeignPasswordHash? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, let iterations = Int(parts[1]), let hash = base64(parts[3]) else { return nil }
        let function: KDF.Insecure.PBKDF2.HashFunction
        switch parts[0] {
        case "pbkdf2_sha256": function = .sha256
        case "pbkdf2_sha1": function = .insecureSHA1
        default: return nil
        }
        return .pbkdf2(function, iterations: iterations, salt: Array(parts[2].utf8), hash: hash)
    }

    private static func keycloak(_ stored: String) -> ForeignPasswordHash? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[2].hasPrefix("i="), let iterations = Int(parts[2].dropFirst(2)),
            let salt = base64(parts[3]), let hash = base64(parts[4])
        else { return nil }
        let function: KDF.Insecure.PBKDF2.HashFunction
        switch parts[1] {
        case "pbkdf2-sha256": function = .sha256
        case "pbkdf2-sha512": function = .sha512
        case "pbkdf2": function = .insecureSHA1
        default: return nil
        }
        return .pbkdf2(function, iterations: iterations, salt: salt, hash: hash)
    }

    private static func passlibScrypt(_ stored: String) -> ForeignPasswordHash? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, let costs = settings(parts[2]), let ln = costs["ln"], ln < 31, let r = costs["r"], let p = costs["p"],
            let salt = adaptedBase64(parts[3]), let hash = adaptedBase64(parts[4])
        else { return nil }
        return .scrypt(n: 1 << ln, r: r, p: p, salt: salt, hash: hash)
    }

    private static func firebase(_ stored: String) -> ForeignPasswordHash? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 7, let costs = settings(parts[2]), let rounds = costs["r"], let memoryCost = costs["m"],
            let salt = base64(parts[3]), let separator = base64(parts[4]), let signerKey = base64(parts[5]), let hash = base64(parts[6])
        else { return nil }
        return .firebaseScrypt(rounds: rounds, memoryCost: memoryCost, salt: salt, separator: separator, signerKey: signerKey, hash: hash)
    }

    /// `a=1,b=2` → `["a": 1, "b": 2]`; nil for anything else.
    private static func settings(_ field: Substring) -> [String: Int]? {
        var values: [String: Int] = [:]
        for pair in field.split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let value = Int(kv[1]), value >= 0 else { return nil }
            values[String(kv[0])] = value
        }
        return values
    }

    /// Standard base64, padded or not.
    static func base64(_ text: Substring) -> [UInt8]? {
        var padded = String(text)
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map(Array.init)
    }

    /// passlib's adapted base64: `.` for `+`, no padding.
    private static func adaptedBase64(_ text: Substring) -> [UInt8]? {
        base64(Substring(text.replacingOccurrences(of: ".", with: "+")))
    }
}
