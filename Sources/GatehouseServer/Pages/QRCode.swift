// QR Code encoder following ISO/IEC 18004 (Model 2): byte mode, versions 1–40, error-correction levels L/M/Q/H.
//
// Written by hand because none of the packages available to Gatehouse encodes QR codes. Its job is to show an
// otpauth:// URI as an inline SVG on pages that must work without JavaScript, so it favours code that can be
// checked against the standard over speed; the largest symbol (version 40) still encodes in milliseconds.

public struct QRCode: Sendable, Equatable {
    /// How much of the symbol may be damaged and still decode: about 7 %, 15 %, 25 % and 30 % respectively.
    public enum Correction: Sendable, CaseIterable {
        case low, medium, quartile, high

        // Internal rather than fileprivate only because the tables it indexes live in QRCode+Encoding.swift.
        var tableRow: Int {
            switch self {
            case .low: 0
            case .medium: 1
            case .quartile: 2
            case .high: 3
            }
        }

        // The format information does not number the levels in L, M, Q, H order (ISO/IEC 18004 Table 12).
        fileprivate var formatBits: Int {
            switch self {
            case .low: 1
            case .medium: 0
            case .quartile: 3
            case .high: 2
            }
        }
    }

    public enum Failure: Error, Sendable, Equatable {
        /// The bytes do not fit in a version 40 symbol at the requested level.
        case tooLong
    }

    /// Modules per side, without the quiet zone: 17 + 4 × version.
    public let size: Int
    /// The symbol version, 1...40: the smallest that holds the data at the requested level.
    public let version: Int
    public let correction: Correction
    /// The data mask pattern, 0...7, that scored the lowest penalty.
    public let mask: Int
    private let modules: [Bool]

    /// Whether the module at column `x`, row `y` is dark. Outside the symbol everything is light,
    /// as the quiet zone around it must be.
    public subscript(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    public init(encoding bytes: [UInt8], correction: Correction = .medium) throws {
        try self.init(encoding: bytes, correction: correction, forcingMask: nil)
    }

    /// Pinning the mask lets tests compare module for module with other encoders, whose penalty
    /// scoring differs in details the standard leaves open.
    init(encoding bytes: [UInt8], correction: Correction, forcingMask: Int?) throws {
        precondition(forcingMask.map { (0...7).contains($0) } ?? true, "mask patterns are numbered 0...7")
        guard let version = (1...40).first(where: { Tables.fits(byteCount: bytes.count, version: $0, correction) }) else {
            throw Failure.tooLong
        }
        var canvas = Canvas(version: version)
        canvas.drawFunctionPatterns()
        canvas.place(Tables.codewords(for: bytes, version: version, correction: correction))
        var best: (penalty: Int, mask: Int, modules: [Bool])?
        for mask in forcingMask.map({ [$0] }) ?? Array(0..<8) {
            var trial = canvas
            trial.apply(mask: mask)
            trial.drawFormat(correction: correction, mask: mask)
            let penalty = trial.penalty()
            if best.map({ penalty < $0.penalty }) ?? true {
                best = (penalty, mask, trial.modules)
            }
        }
        guard let best else { preconditionFailure("no mask was tried") }
        self.size = canvas.size
        self.version = version
        self.correction = correction
        self.mask = best.mask
        self.modules = best.modules
    }

    /// A standalone SVG of the symbol, `moduleSize` pixels per module with a light border of `quietZone`
    /// modules (the standard asks for 4). Dark modules are one path of row runs, which keeps the markup
    /// small enough to inline and leaves no hairline seams between neighbouring modules.
    public func svg(moduleSize: Int = 4, quietZone: Int = 4, title: String) -> String {
        precondition(moduleSize > 0 && quietZone >= 0, "moduleSize must be positive and quietZone not negative")
        let side = size + 2 * quietZone
        let pixels = side * moduleSize
        let label = Self.escapeXML(title)
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard self[x, y] else {
                    x += 1
                    continue
                }
                let start = x
                while self[x, y] { x += 1 }
                path += "M\(start + quietZone) \(y + quietZone)h\(x - start)v1h-\(x - start)z"
            }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(pixels)\" height=\"\(pixels)\" "
            + "viewBox=\"0 0 \(side) \(side)\" role=\"img\" aria-label=\"\(label)\" shape-rendering=\"crispEdges\">"
            + "<title>\(label)</title><rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/>"
            + "<path fill=\"#000\" d=\"\(path)\"/></svg>"
    }

    // The title ends up both in text and in an attribute, so quotes are escaped too. Control characters
    // other than tab and newlines are not allowed anywhere in XML 1.0, so they are dropped.
    private static func escapeXML(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: continue
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// The module grid while it is being built, with a note of which modules belong to function patterns
/// (so that data placement and masking skip them).
private struct Canvas {
    let version: Int
    let size: Int
    var modules: [Bool]
    var reserved: [Bool]

    init(version: Int) {
        self.version = version
        size = 17 + 4 * version
        modules = Array(repeating: false, count: size * size)
        reserved = modules
    }

    private func isDark(_ x: Int, _ y: Int) -> Bool { modules[y * size + x] }

    private mutating func setFunction(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y * size + x] = dark
        reserved[y * size + x] = true
    }

    mutating func drawFunctionPatterns() {
        for i in 0..<size {
            setFunction(6, i, i % 2 == 0)
            setFunction(i, 6, i % 2 == 0)
        }
        // Finders go after the timing lines so their separators overwrite the timing modules they cross.
        for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(x + dx) && (0..<size).contains(y + dy) {
                    let ring = max(abs(dx), abs(dy))
                    setFunction(x + dx, y + dy, ring != 2 && ring != 4)
                }
            }
        }
        let centres = QRCode.Tables.alignmentCentres(version: version)
        for (i, x) in centres.enumerated() {
            for (j, y) in centres.enumerated() {
                // The three corners already hold finder patterns.
                let last = centres.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { setFunction(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        // Reserve the format areas now; the real bits depend on the mask and are written per trial.
        drawFormat(correction: .medium, mask: 0)
        if version >= 7 {
            let bits = version << 12 | Self.bchRemainder(version, generator: 0x1F25, degree: 12)
            for i in 0..<18 {
                let dark = (bits >> i) & 1 == 1
                setFunction(size - 11 + i % 3, i / 3, dark)
                setFunction(i / 3, size - 11 + i % 3, dark)
            }
        }
    }

    /// Writes the 15-bit format information twice (around the top-left finder and split between the other
    /// two), plus the always-dark module beside the bottom-left finder.
    mutating func drawFormat(correction: QRCode.Correction, mask: Int) {
        let data = correction.formatBits << 3 | mask
        // The XOR keeps the format bits from ever being all light, which scanners could mistake for no symbol.
        let bits = (data << 10 | Self.bchRemainder(data, generator: 0x537, degree: 10)) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0...5 { setFunction(8, i, bit(i)) }
        setFunction(8, 7, bit(6))
        setFunction(8, 8, bit(7))
        setFunction(7, 8, bit(8))
        for i in 9..<15 { setFunction(14 - i, 8, bit(i)) }
        for i in 0..<8 { setFunction(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { setFunction(8, size - 15 + i, bit(i)) }
        setFunction(8, size - 8, true)
    }

    /// The check bits of a BCH code: the remainder of `value · x^degree` divided by `generator`.
    private static func bchRemainder(_ value: Int, generator: Int, degree: Int) -> Int {
        var remainder = value << degree
        for shift in stride(from: degree, through: 0, by: -1) where remainder >> (shift + degree) & 1 == 1 {
            remainder ^= generator << shift
        }
        return remainder
    }

    /// Lays the codewords in two-module-wide columns that zigzag up and down from the bottom-right corner,
    /// stepping over the vertical timing line. Modules left over after the last codeword are remainder
    /// bits and stay light before masking.
    mutating func place(_ codewords: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = (right + 1) & 2 == 0
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !reserved[y * size + x] && index < codewords.count * 8 {
                    modules[y * size + x] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1
                    index += 1
                }
            }
            right -= 2
        }
    }

    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !reserved[y * size + x] {
                let flip =
                    switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                if flip { modules[y * size + x].toggle() }
            }
        }
    }

    /// The standard's penalty score (rules N1–N4): lower means fewer patterns that confuse scanners.
    func penalty() -> Int {
        var score = 0
        for line in 0..<size {
            score += Self.linePenalty((0..<size).map { isDark($0, line) })
            score += Self.linePenalty((0..<size).map { isDark(line, $0) })
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = isDark(x, y)
                if isDark(x + 1, y) == colour && isDark(x, y + 1) == colour && isDark(x + 1, y + 1) == colour {
                    score += 3
                }
            }
        }
        let dark = modules.count(where: { $0 })
        let total = modules.count
        // 10 points for each full 5 % step that the dark share strays from 50 %.
        score += 10 * (abs(dark * 20 - total * 10) / total)
        return score
    }

    /// Rules N1 (runs of five or more) and N3 (a finder-like 1:1:3:1:1 run with four light modules on
    /// one side) along one row or column. The area beyond the edge counts as light, as the quiet zone is.
    private static func linePenalty(_ line: [Bool]) -> Int {
        var score = 0
        var runLength = 0
        for (i, dark) in line.enumerated() {
            runLength = i > 0 && line[i - 1] == dark ? runLength + 1 : 1
            if runLength == 5 { score += 3 } else if runLength > 5 { score += 1 }
        }
        var window = 0
        for dark in line + Array(repeating: false, count: 4) {
            window = (window << 1 | (dark ? 1 : 0)) & 0x7FF
            if window == 0b101_1101_0000 || window == 0b000_0101_1101 { score += 40 }
        }
        return score
    }
}
