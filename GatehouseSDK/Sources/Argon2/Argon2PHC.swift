/// A parsed Argon2id hash in PHC string format:
/// `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (salt and hash in
/// unpadded standard base64).
///
/// Parsing is strict and validates everything a later verification would
/// use — including the memory cap — so a tampered or corrupt stored hash is
/// rejected with an ``Argon2Error`` before any memory is allocated for it.
public struct Argon2PHC: Sendable, Equatable {
    /// The cost parameters the hash was computed with.
    public let parameters: Argon2Parameters
    /// The salt (at least 8 bytes).
    public let salt: [UInt8]
    /// The tag (at least 4 bytes); its length is the tag length to recompute.
    public let hash: [UInt8]
    /// The Argon2 type; only ``init(_:variants:)`` reads anything but Argon2id.
    public private(set) var variant: Argon2.Variant = .id

    /// Longest PHC string accepted. Real ones are ~100 bytes; the bound keeps
    /// parsing (and the tag length an attacker could request) trivially small.
    public static let maximumLength = 1024

    /// Builds a PHC value from its parts, validating them as ``init(_:)`` would.
    public init(parameters: Argon2Parameters, salt: [UInt8], hash: [UInt8]) throws(Argon2Error) {
        try Argon2.validate(parameters)
        guard salt.count >= 8 else { throw .invalidSaltLength(salt.count) }
        guard hash.count >= 4 else { throw .invalidTagLength(hash.count) }
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
    }

    /// Parses a PHC string.
    ///
    /// Accepts exactly `$argon2id$v=19$m=<m>,t=<t>,p=<p>$<salt>$<hash>` with
    /// decimal numbers without leading zeros, the same strictness as
    /// libargon2. A string without `v=` denotes version 0x10 and is rejected
    /// as unsupported.
    /// - Throws: ``Argon2Error/malformedPHC(_:)``,
    ///   ``Argon2Error/unsupportedAlgorithm(_:)``,
    ///   ``Argon2Error/unsupportedVersion(_:)``, or a parameter error.
    public init(_ string: String) throws(Argon2Error) {
        try self.init(string, variants: [.id])
    }

    /// Parses a PHC string of any of `variants` (`$argon2i$…`, `$argon2d$…` for imported hashes), as
    /// strictly as ``init(_:)``.
    public init(_ string: String, variants: Set<Argon2.Variant>) throws(Argon2Error) {
        let bytes = Array(string.utf8)
        guard bytes.count <= Argon2PHC.maximumLength else { throw .malformedPHC("string too long") }
        guard bytes.first == UInt8(ascii: "$") else { throw .malformedPHC("must start with $") }
        let fields = bytes.dropFirst().split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)

        let algorithm = String(decoding: fields[0], as: UTF8.self)
        guard let variant = variants.first(where: { $0.name == algorithm }) else { throw .unsupportedAlgorithm(algorithm) }

        guard fields.count >= 2 else { throw .malformedPHC("missing fields") }
        guard fields[1].starts(with: Array("v=".utf8)) else {
            // Without a version field the string is an Argon2 v1.0 (0x10) hash.
            if fields.count == 4 && fields[1].starts(with: Array("m=".utf8)) { throw .unsupportedVersion(0x10) }
            throw .malformedPHC("missing v= field")
        }
        guard fields.count == 5 else { throw .malformedPHC("expected 5 $-separated fields") }
        guard let version = Argon2PHC.parseDecimal(fields[1].dropFirst(2)) else {
            throw .malformedPHC("bad version")
        }
        guard version == Argon2.version else { throw .unsupportedVersion(version) }

        let costs = fields[2].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard costs.count == 3 else { throw .malformedPHC("expected m=,t=,p=") }
        func cost(_ field: ArraySlice<UInt8>, _ key: String) throws(Argon2Error) -> UInt32 {
            let prefix = Array((key + "=").utf8)
            guard field.starts(with: prefix),
                let value = Argon2PHC.parseDecimal(field.dropFirst(prefix.count))
            else { throw .malformedPHC("bad \(key)= parameter") }
            return value
        }
        let parameters = Argon2Parameters(
            memoryKiB: try cost(costs[0], "m"),
            iterations: try cost(costs[1], "t"),
            parallelism: try cost(costs[2], "p"))

        guard let salt = PHCBase64.decode(fields[3]) else { throw .malformedPHC("bad salt encoding") }
        guard let hash = PHCBase64.decode(fields[4]) else { throw .malformedPHC("bad hash encoding") }
        try self.init(parameters: parameters, salt: salt, hash: hash)
        self.variant = variant
    }

    /// The canonical PHC string, as stored in the database.
    public var string: String {
        "$\(variant.name)$v=\(Argon2.version)$m=\(parameters.memoryKiB),t=\(parameters.iterations),"
            + "p=\(parameters.parallelism)$\(PHCBase64.encode(salt))$\(PHCBase64.encode(hash))"
    }

    /// Whether the stored hash was made with parameters other than the
    /// server's current policy, so it should be recomputed (after a
    /// successful login, when the plaintext password is at hand).
    ///
    /// Any difference counts, including weaker-looking *and* stronger ones:
    /// the policy is the single source of truth, and rehashing also lets an
    /// operator roll back an accidental over-costly setting.
    public func needsRehash(comparedTo policy: Argon2Parameters) -> Bool {
        variant != .id || parameters != policy
    }

    /// Recomputes the tag for `password` and compares it in constant time.
    ///
    /// The password is hashed as its UTF-8 bytes without Unicode
    /// normalisation, matching argon2-cffi and libargon2.
    ///
    /// - Parameter workspace: Memory kept from an earlier hash on this thread (``Argon2/Workspace``).
    public func verify(password: String, workspace: Argon2.Workspace? = nil) throws(Argon2Error) -> Bool {
        let candidate = try Argon2.hash(
            password: Array(password.utf8), salt: salt, parameters: parameters, tagLength: hash.count, variant: variant,
            workspace: workspace)
        return constantTimeEquals(candidate, hash)
    }

    /// Parses a non-negative decimal fitting UInt32, with no sign and no
    /// leading zeros (so every value has exactly one spelling).
    private static func parseDecimal(_ digits: ArraySlice<UInt8>) -> UInt32? {
        guard !digits.isEmpty, digits.count <= 10 else { return nil }
        if digits.count > 1 && digits.first == UInt8(ascii: "0") { return nil }
        var value: UInt64 = 0
        for c in digits {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + UInt64(c - UInt8(ascii: "0"))
        }
        return value <= UInt64(UInt32.max) ? UInt32(value) : nil
    }
}

extension Argon2 {
    /// Hashes a password into a PHC string for storage.
    ///
    /// - Parameters:
    ///   - password: The password; hashed as its UTF-8 bytes.
    ///   - parameters: The cost policy, usually ``Argon2Parameters/owaspDefault``.
    ///   - salt: The salt; pass `nil` (the default) for 16 fresh random bytes
    ///     from `SystemRandomNumberGenerator` (the OS CSPRNG). Supplying one is
    ///     meant for tests.
    ///   - workspace: Memory kept from an earlier hash on this thread (``Workspace``).
    /// - Returns: e.g. `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<32-byte tag>`.
    public static func hashPHC(
        password: String, parameters: Argon2Parameters, salt: [UInt8]? = nil, workspace: Workspace? = nil
    ) throws(Argon2Error) -> String {
        let salt = salt ?? randomSalt()
        let tag = try hash(password: Array(password.utf8), salt: salt, parameters: parameters, tagLength: 32, workspace: workspace)
        return try Argon2PHC(parameters: parameters, salt: salt, hash: tag).string
    }

    /// Checks a password against a stored PHC string, comparing tags in
    /// constant time.
    ///
    /// - Returns: `true` if the password matches.
    /// - Throws: ``Argon2Error`` if the string is malformed, is not
    ///   Argon2id v19, or asks for parameters outside the limits (including
    ///   ``maximumMemoryKiB``). A wrong password is `false`, never an error.
    public static func verifyPHC(password: String, phc: String) throws(Argon2Error) -> Bool {
        try Argon2PHC(phc).verify(password: password)
    }

    static func randomSalt() -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        var salt = [UInt8]()
        salt.reserveCapacity(16)
        for _ in 0..<2 {
            let word = rng.next()
            for b in 0..<8 { salt.append(UInt8(truncatingIfNeeded: word >> (UInt64(b) * 8))) }
        }
        return salt
    }
}

/// Compares two tags without an early exit, so the time taken does not
/// reveal how long a prefix of a guessed tag was correct. Lengths are public
/// (they come from the stored string), so a length mismatch may return early.
@inline(never)
func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in 0..<a.count {
        difference |= a[i] ^ b[i]
    }
    return difference == 0
}
