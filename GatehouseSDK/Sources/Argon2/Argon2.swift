/// Argon2id password hashing (RFC 9106, version 0x13), in pure Swift.
///
/// Only Argon2id is offered because it is the RFC's recommended variant for
/// password hashing; only version 0x13 because 0x10 is obsolete and weaker.
///
/// ```swift
/// let stored = try Argon2.hashPHC(password: "hunter2", parameters: .owaspDefault)
/// let ok = try Argon2.verifyPHC(password: "hunter2", phc: stored)
/// ```
public enum Argon2 {
    /// Upper bound on `memoryKiB` (4 GiB), enforced on every hash.
    ///
    /// RFC 9106 allows up to 2^32 - 1 KiB (4 TiB). A stored PHC string could
    /// be tampered with to request that much, and `verifyPHC` would then try
    /// to allocate it; the cap turns that into a thrown error instead.
    public static let maximumMemoryKiB: UInt32 = 4 * 1024 * 1024

    /// The only Argon2 version implemented: 0x13 (decimal 19, as in PHC `v=19`).
    public static let version: UInt32 = 0x13

    /// Argon2 type code `y` for Argon2id.
    static let argon2idType: UInt32 = Variant.id.rawValue

    /// The three Argon2 types (RFC 9106 section 3.1, type code `y`). Argon2id is the one to hash with;
    /// Argon2d and Argon2i are here to verify hashes imported from systems that used them.
    public enum Variant: UInt32, Sendable {
        case d = 0
        case i = 1
        case id = 2

        /// The PHC algorithm name: `argon2d`, `argon2i`, `argon2id`.
        public var name: String { "argon2" + String(describing: self) }
    }

    /// Computes a raw Argon2id tag.
    ///
    /// - Parameters:
    ///   - password: The password bytes `P` (0 ... 2^32 - 1 bytes).
    ///   - salt: The salt `S`; at least 8 bytes (16 random bytes recommended).
    ///   - parameters: Memory, time and parallelism costs.
    ///   - tagLength: Output length `T` in bytes (4 ... 2^32 - 1).
    ///   - secret: Optional secret key `K` (a "pepper").
    ///   - associatedData: Optional associated data `X`.
    /// - Returns: The `tagLength`-byte tag.
    /// - Throws: ``Argon2Error`` if any input is outside RFC 9106's limits or
    ///   memory exceeds ``maximumMemoryKiB``.
    public static func hash(
        password: [UInt8],
        salt: [UInt8],
        parameters: Argon2Parameters,
        tagLength: Int = 32,
        secret: [UInt8] = [],
        associatedData: [UInt8] = [],
        variant: Variant = .id,
        workspace: Workspace? = nil
    ) throws(Argon2Error) -> [UInt8] {
        let max32 = Int(UInt32.max)
        guard password.count <= max32 else { throw .passwordTooLong }
        guard salt.count >= 8, salt.count <= max32 else { throw .invalidSaltLength(salt.count) }
        guard secret.count <= max32 else { throw .secretTooLong }
        guard associatedData.count <= max32 else { throw .associatedDataTooLong }
        guard tagLength >= 4, tagLength <= max32 else { throw .invalidTagLength(tagLength) }
        try validate(parameters)

        return computeTag(
            password: password, salt: salt, parameters: parameters, tagLength: tagLength,
            secret: secret, associatedData: associatedData, variant: variant, workspace: workspace)
    }

    /// Checks the cost parameters against RFC 9106 and ``maximumMemoryKiB``.
    static func validate(_ parameters: Argon2Parameters) throws(Argon2Error) {
        let p = parameters.parallelism
        guard p >= 1, p <= (1 << 24) - 1 else { throw .invalidParallelism(p) }
        guard parameters.iterations >= 1 else { throw .invalidIterations(parameters.iterations) }
        // p < 2^24, so 8 * p cannot overflow UInt32.
        guard parameters.memoryKiB >= 8 * p else {
            throw .memoryTooSmall(memoryKiB: parameters.memoryKiB, minimum: 8 * p)
        }
        guard parameters.memoryKiB <= maximumMemoryKiB else {
            throw .memoryTooLarge(memoryKiB: parameters.memoryKiB, maximum: maximumMemoryKiB)
        }
    }

    /// The algorithm proper (RFC 9106 section 3.2). Inputs are already validated.
    ///
    /// Lanes are filled one after another on the calling thread rather than
    /// concurrently: within a slice no lane reads another lane's current
    /// segment, so sequential order gives the identical result. That keeps the
    /// module free of threading, and the server uses `p = 1` anyway.
    static func computeTag(
        password: [UInt8], salt: [UInt8], parameters: Argon2Parameters, tagLength: Int,
        secret: [UInt8], associatedData: [UInt8], variant: Variant = .id, workspace: Workspace? = nil
    ) -> [UInt8] {
        let lanes = Int(parameters.parallelism)
        let passes = Int(parameters.iterations)
        // m' = 4 * p * floor(m / 4p): memory is split evenly into p lanes of 4 slices.
        let blockCount = 4 * lanes * (Int(parameters.memoryKiB) / (4 * lanes))

        // H0 = H^64(LE32(p) || LE32(T) || LE32(m) || LE32(t) || LE32(v) || LE32(y)
        //           || LE32(|P|) || P || LE32(|S|) || S || LE32(|K|) || K || LE32(|X|) || X)
        var h = Blake2b(digestLength: 64)
        h.update(le32: parameters.parallelism)
        h.update(le32: UInt32(tagLength))
        h.update(le32: parameters.memoryKiB)
        h.update(le32: parameters.iterations)
        h.update(le32: version)
        h.update(le32: variant.rawValue)
        for field in [password, salt, secret, associatedData] {
            h.update(le32: UInt32(field.count))
            h.update(field)
        }
        let h0 = h.finalize()

        let memory =
            workspace?.buffer(words: blockCount * argon2BlockWords)
            ?? UnsafeMutablePointer<UInt64>.allocate(capacity: blockCount * argon2BlockWords)
        defer {
            // Wipe before freeing (or keeping) so password-derived state does not
            // linger in the heap (libargon2 does the same). deallocate() and the
            // workspace are opaque to the optimiser, so this store is not
            // eliminated as dead.
            memory.update(repeating: 0, count: blockCount * argon2BlockWords)
            if workspace == nil { memory.deallocate() }
        }
        // No up-front zeroing: every block is written before it is read.

        let filler = SegmentFiller(
            memory: memory, blockCount: blockCount, lanes: lanes, passes: passes, variant: variant)

        // B[i][0] = H'^1024(H0 || LE32(0) || LE32(i)), B[i][1] likewise with 1.
        for lane in 0..<lanes {
            for column in 0..<2 {
                var seed = h0
                appendLE32(UInt32(column), to: &seed)
                appendLE32(UInt32(lane), to: &seed)
                let bytes = variableLengthHash(seed, outputLength: 1024)
                loadBlock(bytes, into: memory + (lane * filler.laneLength + column) * argon2BlockWords)
            }
        }

        for pass in 0..<passes {
            for slice in 0..<4 {
                for lane in 0..<lanes {
                    filler.fillSegment(pass: pass, slice: slice, lane: lane)
                }
            }
        }

        // C = XOR of the last block of every lane; tag = H'^T(C).
        var finalBytes = [UInt8](repeating: 0, count: 1024)
        for i in 0..<argon2BlockWords {
            var word: UInt64 = 0
            for lane in 0..<lanes {
                word ^= memory[(lane * filler.laneLength + filler.laneLength - 1) * argon2BlockWords + i]
            }
            for b in 0..<8 { finalBytes[i * 8 + b] = UInt8(truncatingIfNeeded: word >> (UInt64(b) * 8)) }
        }
        return variableLengthHash(finalBytes, outputLength: tagLength)
    }

    /// H' (RFC 9106 section 3.3): BLAKE2b stretched to any output length by
    /// chaining 64-byte digests and keeping the first 32 bytes of each.
    static func variableLengthHash(_ input: [UInt8], outputLength: Int) -> [UInt8] {
        var first = Blake2b(digestLength: min(outputLength, 64))
        first.update(le32: UInt32(outputLength))
        first.update(input)
        if outputLength <= 64 {
            return first.finalize()
        }
        // r = ceil(T / 32) - 2 full 64-byte links, then one (T - 32r)-byte link.
        let r = (outputLength + 31) / 32 - 2
        var output = [UInt8]()
        output.reserveCapacity(outputLength)
        var v = first.finalize()
        output.append(contentsOf: v[0..<32])
        if r >= 2 {
            for _ in 2...r {
                v = Blake2b.hash(v, digestLength: 64)
                output.append(contentsOf: v[0..<32])
            }
        }
        output.append(contentsOf: Blake2b.hash(v, digestLength: outputLength - 32 * r))
        return output
    }

    private static func appendLE32(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    /// Interprets 1024 bytes as 128 little-endian words.
    private static func loadBlock(_ bytes: [UInt8], into block: UnsafeMutablePointer<UInt64>) {
        bytes.withUnsafeBytes { raw in
            for i in 0..<argon2BlockWords {
                block[i] = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
            }
        }
    }
}
