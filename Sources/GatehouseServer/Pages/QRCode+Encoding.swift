// Codeword side of the QR Code encoder (ISO/IEC 18004): the data bit stream, Reed–Solomon error correction,
// block splitting and interleaving, and the per-version tables they need. See QRCode.swift for why this exists.

extension QRCode {
    enum Tables {
        // Error-correction codewords in each block, then the number of blocks, by level (L, M, Q, H) and
        // version (index 0 unused). Together with the symbol's raw capacity these fix the whole block
        // structure of ISO/IEC 18004 Table 9, so the table's other columns need not be copied.
        private static let eccPerBlock: [[Int]] = [
            [
                0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28,
                30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
            ],
            [
                0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28,
                28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
            ],
            [
                0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30, 28, 30, 30, 30, 30, 28,
                30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
            ],
            [
                0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28, 30, 24, 30, 30, 30, 30,
                30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
            ],
        ]
        private static let blockCount: [[Int]] = [
            [
                0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17,
                18, 19, 19, 20, 21, 22, 24, 25,
            ],
            [
                0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28,
                29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
            ],
            [
                0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20, 23, 23, 25, 27, 29, 34, 34, 35,
                38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
            ],
            [
                0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25, 25, 34, 30, 32, 35, 37, 40, 42,
                45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
            ],
        ]

        /// Rows and columns of the alignment pattern centres (ISO/IEC 18004 Annex E). The table there is
        /// regular: the first is always 6, the last is 7 in from the far edge, and the rest are spaced evenly
        /// by an even step rounded up, except version 32, which the standard spaces by 26 instead.
        static func alignmentCentres(version: Int) -> [Int] {
            guard version > 1 else { return [] }
            let count = version / 7 + 2
            let last = version * 4 + 10
            let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            return [6] + (0..<(count - 1)).reversed().map { last - $0 * step }
        }

        /// Modules left for codewords once function patterns, format and version information are placed.
        private static func rawDataModules(version: Int) -> Int {
            let size = 17 + 4 * version
            var modules = size * size - 3 * 64 - 2 * (size - 16) - 31
            if version >= 2 {
                let centres = version / 7 + 2
                // Alignment patterns overlapping the timing lines must not be subtracted twice.
                modules -= 25 * (centres * centres - 3) - 10 * (centres - 2)
            }
            if version >= 7 { modules -= 36 }
            return modules
        }

        private static func dataCodewords(version: Int, _ correction: Correction) -> Int {
            let row = correction.tableRow
            return rawDataModules(version: version) / 8 - eccPerBlock[row][version] * blockCount[row][version]
        }

        // The character count grows from 8 to 16 bits for byte mode from version 10 on (Table 3).
        private static func countBits(version: Int) -> Int { version < 10 ? 8 : 16 }

        static func fits(byteCount: Int, version: Int, _ correction: Correction) -> Bool {
            byteCount < 1 << countBits(version: version)
                && 4 + countBits(version: version) + 8 * byteCount <= 8 * dataCodewords(version: version, correction)
        }

        /// The final codeword sequence: one byte-mode segment, terminated and padded to capacity, split into
        /// blocks that each get Reed–Solomon check codewords, then interleaved so that a local smudge spreads
        /// its damage across blocks.
        static func codewords(for bytes: [UInt8], version: Int, correction: Correction) -> [UInt8] {
            let capacity = dataCodewords(version: version, correction)
            var stream = BitStream()
            stream.append(0b0100, bits: 4)
            stream.append(bytes.count, bits: countBits(version: version))
            for byte in bytes { stream.append(Int(byte), bits: 8) }
            stream.append(0, bits: min(4, capacity * 8 - stream.count))
            stream.append(0, bits: (8 - stream.count % 8) % 8)
            var data = stream.bytes
            // The standard's pad codewords alternate 11101100 and 00010001.
            var pad: UInt8 = 0xEC
            while data.count < capacity {
                data.append(pad)
                pad ^= 0xEC ^ 0x11
            }
            return interleave(data, version: version, correction: correction)
        }

        private static func interleave(_ data: [UInt8], version: Int, correction: Correction) -> [UInt8] {
            let blocks = blockCount[correction.tableRow][version]
            let eccLength = eccPerBlock[correction.tableRow][version]
            let raw = rawDataModules(version: version) / 8
            // When the codewords do not divide evenly, the later blocks each carry one more data codeword.
            let shortBlocks = blocks - raw % blocks
            let shortLength = raw / blocks - eccLength
            let generator = ReedSolomon.generator(degree: eccLength)
            var dataBlocks: [ArraySlice<UInt8>] = []
            var eccBlocks: [[UInt8]] = []
            var start = data.startIndex
            for block in 0..<blocks {
                let length = shortLength + (block < shortBlocks ? 0 : 1)
                let slice = data[start..<(start + length)]
                dataBlocks.append(slice)
                eccBlocks.append(ReedSolomon.remainder(of: slice, generator: generator))
                start += length
            }
            var result: [UInt8] = []
            result.reserveCapacity(raw)
            for i in 0...shortLength {
                for block in dataBlocks where i < block.count { result.append(block[block.startIndex + i]) }
            }
            for i in 0..<eccLength {
                for block in eccBlocks { result.append(block[i]) }
            }
            return result
        }
    }
}

/// Bits gathered most significant first, as the standard writes the data stream.
private struct BitStream {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: Int, bits: Int) {
        for shift in stride(from: bits - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}

/// Reed–Solomon over GF(256) with the field polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D) that QR codes use.
private enum ReedSolomon {
    // Log and antilog tables turn field multiplication into an addition of exponents.
    private static let (exp, log): ([UInt8], [Int]) = {
        var exp = [UInt8](repeating: 0, count: 255)
        var log = [Int](repeating: 0, count: 256)
        var value = 1
        for power in 0..<255 {
            exp[power] = UInt8(value)
            log[value] = power
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return (exp, log)
    }()

    private static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        a == 0 || b == 0 ? 0 : exp[(log[Int(a)] + log[Int(b)]) % 255]
    }

    /// Coefficients of (x − α⁰)(x − α¹)…(x − α^(degree−1)), highest power first, without the leading 1.
    static func generator(degree: Int) -> [UInt8] {
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            // Multiply the running product by (x − root); subtraction is XOR in this field.
            for j in 0..<degree {
                coefficients[j] = multiply(coefficients[j], root)
                if j + 1 < degree { coefficients[j] ^= coefficients[j + 1] }
            }
            root = multiply(root, 2)
        }
        return coefficients
    }

    /// The check codewords: the remainder of data · x^degree divided by the generator.
    static func remainder(of data: ArraySlice<UInt8>, generator: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder.removeFirst()
            remainder.append(0)
            for i in remainder.indices { remainder[i] ^= multiply(generator[i], factor) }
        }
        return remainder
    }
}
