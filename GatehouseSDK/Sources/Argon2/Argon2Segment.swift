// Filling one segment (RFC 9106 sections 3.4 and 3.4.1): choosing each
// block's reference block and calling G.

/// Per-hash state for filling memory: geometry plus the scratch blocks, which
/// are allocated once per hash so the per-block loop never allocates.
///
/// Noncopyable so the scratch allocation has exactly one owner and is freed
/// (and wiped) in `deinit`.
struct SegmentFiller: ~Copyable {
    let memory: UnsafeMutablePointer<UInt64>
    let lanes: Int
    let passes: Int
    let blockCount: Int
    let laneLength: Int
    let segmentLength: Int
    let variant: Argon2.Variant

    /// Four scratch blocks in one allocation: G's temporary, the current
    /// address block, the address generator's input block, and a zero block.
    private let scratchBase: UnsafeMutablePointer<UInt64>
    var scratch: UnsafeMutablePointer<UInt64> { scratchBase }
    private var addressBlock: UnsafeMutablePointer<UInt64> { scratchBase + argon2BlockWords }
    private var inputBlock: UnsafeMutablePointer<UInt64> { scratchBase + 2 * argon2BlockWords }
    private var zeroBlock: UnsafeMutablePointer<UInt64> { scratchBase + 3 * argon2BlockWords }

    init(memory: UnsafeMutablePointer<UInt64>, blockCount: Int, lanes: Int, passes: Int, variant: Argon2.Variant = .id) {
        self.variant = variant
        self.memory = memory
        self.lanes = lanes
        self.passes = passes
        self.blockCount = blockCount
        self.laneLength = blockCount / lanes
        self.segmentLength = laneLength / 4
        self.scratchBase = .allocate(capacity: 4 * argon2BlockWords)
        scratchBase.initialize(repeating: 0, count: 4 * argon2BlockWords)
    }

    deinit {
        scratchBase.update(repeating: 0, count: 4 * argon2BlockWords)
        scratchBase.deallocate()
    }

    /// Produces the next 128 pseudo-random J1||J2 values for data-independent
    /// addressing: address = G(0, G(0, input)) after bumping the input's counter.
    private func nextAddresses() {
        inputBlock[6] &+= 1
        argon2FillBlock(prev: zeroBlock, ref: inputBlock, next: addressBlock, withXor: false, scratch: scratch)
        argon2FillBlock(prev: zeroBlock, ref: addressBlock, next: addressBlock, withXor: false, scratch: scratch)
    }

    func fillSegment(pass: Int, slice: Int, lane: Int) {
        // Argon2id: Argon2i-style (password-independent) addressing for the
        // first half of the first pass to resist side channels, Argon2d-style
        // (data-dependent) afterwards to resist time-memory trade-offs.
        // Argon2i is independent throughout, Argon2d never.
        let dataIndependent =
            switch variant {
            case .id: pass == 0 && slice < 2
            case .i: true
            case .d: false
            }
        if dataIndependent {
            inputBlock.update(repeating: 0, count: argon2BlockWords)
            inputBlock[0] = UInt64(pass)
            inputBlock[1] = UInt64(lane)
            inputBlock[2] = UInt64(slice)
            inputBlock[3] = UInt64(blockCount)
            inputBlock[4] = UInt64(passes)
            inputBlock[5] = UInt64(variant.rawValue)
        }

        // The first two blocks of each lane come from H', not G.
        var startIndex = 0
        if pass == 0 && slice == 0 {
            startIndex = 2
            // Index 2 is not a multiple of 128, so the loop would not generate
            // the first address block itself.
            if dataIndependent { nextAddresses() }
        }

        let laneStart = lane * laneLength
        let uLanes = UInt64(lanes)
        for index in startIndex..<segmentLength {
            let current = laneStart + slice * segmentLength + index
            // The block before the first one of a lane is the lane's last block.
            let previous = (slice == 0 && index == 0) ? laneStart + laneLength - 1 : current - 1

            let pseudoRandom: UInt64
            if dataIndependent {
                if index % argon2BlockWords == 0 { nextAddresses() }
                pseudoRandom = addressBlock[index % argon2BlockWords]
            } else {
                pseudoRandom = memory[previous * argon2BlockWords]
            }

            // J2 picks the lane (except in the very first slice, when other
            // lanes have nothing yet); J1 picks the block within it.
            let referenceLane = (pass == 0 && slice == 0) ? lane : Int((pseudoRandom >> 32) % uLanes)
            let referenceIndex = self.referenceIndex(
                pass: pass, slice: slice, index: index,
                j1: pseudoRandom & 0xFFFF_FFFF, sameLane: referenceLane == lane)

            argon2FillBlock(
                prev: memory + previous * argon2BlockWords,
                ref: memory + (referenceLane * laneLength + referenceIndex) * argon2BlockWords,
                next: memory + current * argon2BlockWords,
                withXor: pass != 0,
                scratch: scratch)
        }
    }

    /// RFC 9106 section 3.4.2: maps J1 onto the set of blocks that may be
    /// referenced, with a quadratic bias towards recent blocks.
    @inline(__always)
    private func referenceIndex(pass: Int, slice: Int, index: Int, j1: UInt64, sameLane: Bool) -> Int {
        // Blocks available: everything finished so far, minus the previous
        // block (already an input) and, for other lanes, minus their current
        // segment (still being written in a parallel implementation).
        let areaSize: Int
        if pass == 0 {
            if slice == 0 {
                areaSize = index - 1
            } else if sameLane {
                areaSize = slice * segmentLength + index - 1
            } else {
                areaSize = slice * segmentLength - (index == 0 ? 1 : 0)
            }
        } else {
            if sameLane {
                areaSize = laneLength - segmentLength + index - 1
            } else {
                areaSize = laneLength - segmentLength - (index == 0 ? 1 : 0)
            }
        }
        let area = UInt64(areaSize)
        let x = (j1 &* j1) >> 32
        let relative = area &- 1 &- ((area &* x) >> 32)
        // After the first pass the window starts just after the current segment.
        let start = (pass == 0 || slice == 3) ? 0 : (slice + 1) * segmentLength
        return (start + Int(relative)) % laneLength
    }
}
