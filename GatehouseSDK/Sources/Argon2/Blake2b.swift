// BLAKE2b (RFC 7693), unkeyed, 1...64-byte digests.
//
// Argon2 is defined on top of BLAKE2b (its H and H' functions), and none of the
// Swift packages available to this project offers BLAKE2b, so it lives here.
// Only Argon2's needs are covered: no key, no salt/personalisation, and at most
// 2^64 bytes of input. BLAKE2b is a small part of Argon2's cost (a few dozen
// compressions per hash), so this favours clarity over speed; the hot loop is
// the BlaMka permutation in Argon2Compression.swift.

struct Blake2b {
    /// RFC 7693 section 2.6: the SHA-512 initialisation vector.
    static let iv: [UInt64] = [
        0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
    ]

    /// RFC 7693 section 2.7: message word schedule, one row per round
    /// (rounds 10 and 11 reuse rows 0 and 1).
    static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ]

    static let blockSize = 128

    private var h: [UInt64]
    private var buffer: [UInt8]
    private var bufferCount = 0
    /// Bytes compressed so far (the 128-bit counter `t`; the high half is
    /// carried for completeness although Argon2 never gets near 2^64 bytes).
    private var countLow: UInt64 = 0
    private var countHigh: UInt64 = 0
    let digestLength: Int

    /// - Precondition: `1 <= digestLength <= 64` (internal callers guarantee it).
    init(digestLength: Int) {
        precondition((1...64).contains(digestLength), "BLAKE2b digest length must be 1...64")
        self.digestLength = digestLength
        var h = Blake2b.iv
        // Parameter block word 0: digest length, key length 0, fanout 1, depth 1.
        h[0] ^= 0x0101_0000 ^ UInt64(digestLength)
        self.h = h
        self.buffer = [UInt8](repeating: 0, count: Blake2b.blockSize)
    }

    mutating func update(_ input: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < input.count {
            // The last block must be compressed with the final flag, so a full
            // buffer is only flushed once we know more input follows.
            if bufferCount == Blake2b.blockSize {
                addToCounter(UInt64(Blake2b.blockSize))
                compress(isFinal: false)
                bufferCount = 0
            }
            let take = min(Blake2b.blockSize - bufferCount, input.count - offset)
            let start = bufferCount
            buffer.withUnsafeMutableBytes { dst in
                dst.baseAddress!.advanced(by: start)
                    .copyMemory(from: input.baseAddress!.advanced(by: offset), byteCount: take)
            }
            bufferCount += take
            offset += take
        }
    }

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds a 32-bit little-endian integer, the way Argon2 encodes every length.
    mutating func update(le32 value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { update($0) }
    }

    mutating func finalize() -> [UInt8] {
        addToCounter(UInt64(bufferCount))
        for i in bufferCount..<Blake2b.blockSize { buffer[i] = 0 }
        compress(isFinal: true)
        var out = [UInt8](repeating: 0, count: digestLength)
        for i in 0..<digestLength {
            out[i] = UInt8(truncatingIfNeeded: h[i / 8] >> (UInt64(i % 8) * 8))
        }
        return out
    }

    /// One-shot convenience.
    static func hash(_ bytes: [UInt8], digestLength: Int) -> [UInt8] {
        var b = Blake2b(digestLength: digestLength)
        b.update(bytes)
        return b.finalize()
    }

    private mutating func addToCounter(_ n: UInt64) {
        let (sum, overflow) = countLow.addingReportingOverflow(n)
        countLow = sum
        if overflow { countHigh &+= 1 }
    }

    @inline(__always)
    private static func mix(
        _ v: UnsafeMutablePointer<UInt64>, _ a: Int, _ b: Int, _ c: Int, _ d: Int,
        _ x: UInt64, _ y: UInt64
    ) {
        v[a] = v[a] &+ v[b] &+ x
        v[d] = rotr(v[d] ^ v[a], 32)
        v[c] = v[c] &+ v[d]
        v[b] = rotr(v[b] ^ v[c], 24)
        v[a] = v[a] &+ v[b] &+ y
        v[d] = rotr(v[d] ^ v[a], 16)
        v[c] = v[c] &+ v[d]
        v[b] = rotr(v[b] ^ v[c], 63)
    }

    private mutating func compress(isFinal: Bool) {
        let t0 = countLow, t1 = countHigh
        buffer.withUnsafeBytes { block in
            h.withUnsafeMutableBufferPointer { h in
                // Stack scratch (no heap traffic): 16 message words, then the 16-word working vector.
                withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 32) { scratch in
                    let m = scratch.baseAddress!
                    let v = m + 16
                    for i in 0..<16 {
                        m[i] = UInt64(littleEndian: block.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                    }
                    for i in 0..<8 {
                        v[i] = h[i]
                        v[i + 8] = Blake2b.iv[i]
                    }
                    v[12] ^= t0
                    v[13] ^= t1
                    if isFinal { v[14] = ~v[14] }
                    for round in 0..<12 {
                        let s = Blake2b.sigma[round % 10]
                        Blake2b.mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]])
                        Blake2b.mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]])
                        Blake2b.mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]])
                        Blake2b.mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]])
                        Blake2b.mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]])
                        Blake2b.mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]])
                        Blake2b.mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]])
                        Blake2b.mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]])
                    }
                    for i in 0..<8 {
                        h[i] ^= v[i] ^ v[i + 8]
                    }
                }
            }
        }
    }
}

/// Rotate right by a constant; the masking shifts compile to a single `ror`.
@inline(__always)
func rotr(_ x: UInt64, _ n: UInt64) -> UInt64 {
    (x &>> n) | (x &<< (64 &- n))
}
