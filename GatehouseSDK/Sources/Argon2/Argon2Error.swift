/// Everything that can go wrong when hashing or parsing.
///
/// Every invalid input — including attacker-supplied PHC strings — is reported
/// through this type instead of a trap, so a malformed stored hash can never
/// take the server down.
public enum Argon2Error: Error, Sendable, Equatable {
    /// The password is longer than RFC 9106 allows (2^32 - 1 bytes).
    case passwordTooLong
    /// The salt is shorter than 8 bytes or longer than 2^32 - 1 bytes.
    case invalidSaltLength(Int)
    /// The secret (key) is longer than 2^32 - 1 bytes.
    case secretTooLong
    /// The associated data is longer than 2^32 - 1 bytes.
    case associatedDataTooLong
    /// The requested tag length is outside 4 ... 2^32 - 1 bytes.
    case invalidTagLength(Int)
    /// `iterations` is 0.
    case invalidIterations(UInt32)
    /// `parallelism` is outside 1 ... 2^24 - 1.
    case invalidParallelism(UInt32)
    /// `memoryKiB` is below `8 * parallelism`.
    case memoryTooSmall(memoryKiB: UInt32, minimum: UInt32)
    /// `memoryKiB` is above ``Argon2/maximumMemoryKiB``.
    case memoryTooLarge(memoryKiB: UInt32, maximum: UInt32)
    /// The PHC string is not of the form `$argon2id$v=19$m=M,t=T,p=P$SALT$HASH`.
    case malformedPHC(String)
    /// The PHC string names an algorithm other than `argon2id`.
    case unsupportedAlgorithm(String)
    /// The PHC string names an Argon2 version other than 19 (0x13).
    case unsupportedVersion(UInt32)
}

extension Argon2Error: CustomStringConvertible {
    public var description: String {
        switch self {
        case .passwordTooLong: "Argon2: password too long"
        case .invalidSaltLength(let n): "Argon2: salt length \(n) is outside 8...2^32-1 bytes"
        case .secretTooLong: "Argon2: secret too long"
        case .associatedDataTooLong: "Argon2: associated data too long"
        case .invalidTagLength(let n): "Argon2: tag length \(n) is outside 4...2^32-1 bytes"
        case .invalidIterations(let t): "Argon2: iterations \(t) must be at least 1"
        case .invalidParallelism(let p): "Argon2: parallelism \(p) is outside 1...2^24-1"
        case .memoryTooSmall(let m, let min): "Argon2: memory \(m) KiB is below the minimum \(min) KiB"
        case .memoryTooLarge(let m, let max): "Argon2: memory \(m) KiB exceeds the cap of \(max) KiB"
        case .malformedPHC(let why): "Argon2: malformed PHC string (\(why))"
        case .unsupportedAlgorithm(let a): "Argon2: unsupported algorithm \(a)"
        case .unsupportedVersion(let v): "Argon2: unsupported version \(v)"
        }
    }
}
