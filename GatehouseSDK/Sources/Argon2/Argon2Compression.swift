// Argon2's compression function G (RFC 9106 section 3.5) — the hot loop.
//
// Nearly all of Argon2's time is spent here (two BlaMka permutations per 1 KiB
// block), so the code is written for the optimiser rather than for brevity:
// * blocks are 128 UInt64 words inside one contiguous allocation and are
//   addressed through unsafe pointers, so there are no bounds checks, no
//   copy-on-write checks and no per-block allocations;
// * all arithmetic is wrapping (`&+`, `&*`, masking shifts), so there are no
//   overflow traps;
// * the BlaMka round is force-inlined so its 16 words live in registers.

/// Number of 64-bit words in one 1024-byte Argon2 block.
let argon2BlockWords = 128

/// BlaMka's multiply-add: `x + y + 2 * lo32(x) * lo32(y)` (mod 2^64).
/// The 32x32->64 product is what makes the permutation expensive on ASICs.
@inline(__always)
private func fBlaMka(_ x: UInt64, _ y: UInt64) -> UInt64 {
    let product = (x & 0xFFFF_FFFF) &* (y & 0xFFFF_FFFF)
    return x &+ y &+ (product &<< 1)
}

/// RFC 9106's GB: BLAKE2b's G with the additions replaced by ``fBlaMka(_:_:)``
/// and no message words.
@inline(__always)
private func gb(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64) {
    a = fBlaMka(a, b)
    d = rotr(d ^ a, 32)
    c = fBlaMka(c, d)
    b = rotr(b ^ c, 24)
    a = fBlaMka(a, b)
    d = rotr(d ^ a, 16)
    c = fBlaMka(c, d)
    b = rotr(b ^ c, 63)
}

/// The permutation P applied to 16 words of a block.
///
/// Word `k` of the round's input is `p[(k / 2) * stride + k % 2]`: with
/// `stride == 2` that is 16 consecutive words (a row of the 8x8 matrix of
/// 16-byte registers); with `stride == 16` it is a column. One function for
/// both keeps the index arithmetic constant-folded after inlining.
@inline(__always)
private func permute(_ p: UnsafeMutablePointer<UInt64>, stride s: Int) {
    var v0 = p[0], v1 = p[1]
    var v2 = p[s], v3 = p[s + 1]
    var v4 = p[2 * s], v5 = p[2 * s + 1]
    var v6 = p[3 * s], v7 = p[3 * s + 1]
    var v8 = p[4 * s], v9 = p[4 * s + 1]
    var v10 = p[5 * s], v11 = p[5 * s + 1]
    var v12 = p[6 * s], v13 = p[6 * s + 1]
    var v14 = p[7 * s], v15 = p[7 * s + 1]

    gb(&v0, &v4, &v8, &v12)
    gb(&v1, &v5, &v9, &v13)
    gb(&v2, &v6, &v10, &v14)
    gb(&v3, &v7, &v11, &v15)
    gb(&v0, &v5, &v10, &v15)
    gb(&v1, &v6, &v11, &v12)
    gb(&v2, &v7, &v8, &v13)
    gb(&v3, &v4, &v9, &v14)

    p[0] = v0; p[1] = v1
    p[s] = v2; p[s + 1] = v3
    p[2 * s] = v4; p[2 * s + 1] = v5
    p[3 * s] = v6; p[3 * s + 1] = v7
    p[4 * s] = v8; p[4 * s + 1] = v9
    p[5 * s] = v10; p[5 * s + 1] = v11
    p[6 * s] = v12; p[6 * s + 1] = v13
    p[7 * s] = v14; p[7 * s + 1] = v15
}

/// Computes `next = G(prev, ref)`, or `next ^= G(prev, ref)` when `withXor`
/// (Argon2 version 0x13 XORs into the old block on every pass after the first).
///
/// `scratch` must hold ``argon2BlockWords`` words; it is the only temporary,
/// so callers allocate it once per hash. `ref` may alias `next` (the address
/// generator does `G(0, G(0, input))` in place) because every word of `ref`
/// is read before the same word of `next` is written.
func argon2FillBlock(
    prev: UnsafePointer<UInt64>,
    ref: UnsafePointer<UInt64>,
    next: UnsafeMutablePointer<UInt64>,
    withXor: Bool,
    scratch r: UnsafeMutablePointer<UInt64>
) {
    // R = prev ^ ref. `next` takes the role of the reference code's `tmp`
    // copy of R (XORed with the old block for v1.3), saving a 1 KiB copy.
    if withXor {
        for i in 0..<argon2BlockWords {
            let x = prev[i] ^ ref[i]
            r[i] = x
            next[i] ^= x
        }
    } else {
        for i in 0..<argon2BlockWords {
            let x = prev[i] ^ ref[i]
            r[i] = x
            next[i] = x
        }
    }
    // Q = P applied to each row, then Z = P applied to each column of Q.
    for row in 0..<8 { permute(r + 16 * row, stride: 2) }
    for column in 0..<8 { permute(r + 2 * column, stride: 16) }
    // G = Z ^ R (^ old next).
    for i in 0..<argon2BlockWords {
        next[i] ^= r[i]
    }
}
