import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

/// The strict CBOR decoder: RFC 8949's examples, every non-canonical or unsupported form refused, and
/// random and mutated input that never crashes or hangs it.
@Suite("CBOR decoder (strict)")
struct CBORDecoderTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test(
        "CBOR-1: RFC 8949 Appendix A's examples in WebAuthn's subset decode to their values; lengths and integers not in their shortest form, indefinite lengths, tags, floats, undefined, duplicate or non-scalar map keys, invalid UTF-8, nesting past 16, trailing bytes and lengths past the end are refused"
    )
    func examplesAndRefusals() throws {
        let valid: [(String, CBORValue)] = [
            ("00", .unsigned(0)), ("17", .unsigned(23)), ("1818", .unsigned(24)), ("1903e8", .unsigned(1000)),
            ("1a000f4240", .unsigned(1_000_000)), ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
            ("1bffffffffffffffff", .unsigned(UInt64.max)), ("20", .negative(0)), ("3863", .negative(99)),
            ("3bffffffffffffffff", .negative(UInt64.max)), ("40", .bytes([])), ("4401020304", .bytes([1, 2, 3, 4])),
            ("60", .text("")), ("6449455446", .text("IETF")), ("62c3bc", .text("ü")), ("64f0908591", .text("𐅑")),
            ("80", .array([])), ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
            ("f4", .bool(false)), ("f5", .bool(true)), ("f6", .null),
            ("a201020304", .map([.init(key: .unsigned(1), value: .unsigned(2)), .init(key: .unsigned(3), value: .unsigned(4))])),
            (
                "a26161016162820203",
                .map([
                    .init(key: .text("a"), value: .unsigned(1)), .init(key: .text("b"), value: .array([.unsigned(2), .unsigned(3)])),
                ])
            ),
        ]
        for (encoded, value) in valid {
            #expect(try CBORDecoder.decode(Self.hex(encoded)) == value, "\(encoded)")
        }
        #expect(CBORValue.negative(99).int == -100)

        let refused: [(String, CBORError)] = [
            ("1817", .nonCanonical), ("190017", .nonCanonical), ("1900ff", .nonCanonical), ("1a0000ffff", .nonCanonical),
            ("1b00000000ffffffff", .nonCanonical), ("5801ff", .nonCanonical), ("3817", .nonCanonical),
            ("5f42010243030405ff", .indefiniteLength), ("9fff", .indefiniteLength), ("bfff", .indefiniteLength),
            ("c11a514b67b0", .unsupported("tag")), ("f93c00", .unsupported("float")), ("fb3ff199999999999a", .unsupported("float")),
            ("f7", .unsupported("simple value 23")), ("f0", .unsupported("simple value 16")), ("1c", .reserved(28)),
            ("a201020103", .duplicateMapKey), ("a1f401", .unsupportedMapKey), ("a1400102", .unsupportedMapKey),
            ("62c328", .invalidUTF8), ("0000", .trailingBytes(1)), ("44010203", .truncated), ("830102", .truncated),
            ("9a7fffffff", .truncated), ("5b7fffffffffffffff00", .truncated), ("bb0fffffffffffffff", .truncated),
            ("", .truncated), ("a1", .truncated),
        ]
        for (encoded, error) in refused {
            #expect(throws: error, "\(encoded)") { try CBORDecoder.decode(Self.hex(encoded)) }
        }
        let deep = [UInt8](repeating: 0x81, count: CBORDecoder.maximumDepth) + [0x00]
        #expect(throws: Never.self) { try CBORDecoder.decode(deep) }
        #expect(throws: CBORError.tooDeep) { try CBORDecoder.decode([0x81] + deep) }
        let (prefix, end) = try CBORDecoder.decodePrefix(Self.hex("ff0102"), from: 1)
        #expect(prefix == .unsigned(1) && end == 2)
    }

    @Test(
        "CBOR-2: property: any value WebAuthn's subset can hold, encoded canonically by the test's own encoder, decodes to itself; random byte strings and mutations of real encodings (bit flips, cuts, insertions, length bumps) never crash or hang the decoder, the authenticator-data reader or the attestation-object reader"
    )
    func propertiesAndFuzz() throws {
        var random = SplitMix64(seed: 0x5eed_ca11)
        for _ in 0..<3000 {
            let value = Self.randomValue(&random, depth: 0)
            let encoded = TestCBOR.encode(value)
            #expect(try CBORDecoder.decode(encoded) == value)
        }
        // Random bytes: each either decodes or throws a CBORError (typed throws make anything else impossible).
        var decoded = 0
        for _ in 0..<60_000 {
            let count = Int(random.next() % 48)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if (try? CBORDecoder.decode(bytes)) != nil { decoded += 1 }
        }
        #expect(decoded > 0)  // the generator does reach valid items, so the loop exercises both outcomes

        // Mutations of a realistic attestation object: a none statement over ES256 authenticator data.
        let authData = Self.sampleAuthenticatorData()
        let object = TestCBOR.encode(
            .map([
                .init(key: .text("fmt"), value: .text("none")), .init(key: .text("attStmt"), value: .map([])),
                .init(key: .text("authData"), value: .bytes(authData)),
            ]))
        #expect(try AttestationObject(object).authenticatorData.attestedCredential != nil)
        for _ in 0..<40_000 {
            var mutated = object
            switch random.next() % 4 {
            case 0: mutated[Int(random.next() % UInt64(mutated.count))] ^= UInt8(1 << (random.next() % 8))
            case 1: mutated.removeLast(Int(random.next() % UInt64(mutated.count)))
            case 2: mutated.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(mutated.count)))
            default: mutated[Int(random.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: random.next() | 0x18)
            }
            _ = try? AttestationObject(mutated)
            var data = authData
            data[Int(random.next() % UInt64(data.count))] ^= UInt8(1 << (random.next() % 8))
            _ = try? AuthenticatorData(data)
        }
    }

    /// Authenticator data with AT set, a 16-byte credential id and a real P-256 point, for mutation.
    static func sampleAuthenticatorData() -> [UInt8] {
        let key = P256Point.sample
        let cose = TestCBOR.encode(
            .map([
                .init(key: .unsigned(1), value: .unsigned(2)), .init(key: .unsigned(3), value: .negative(6)),
                .init(key: .negative(0), value: .unsigned(1)), .init(key: .negative(1), value: .bytes(key.x)),
                .init(key: .negative(2), value: .bytes(key.y)),
            ]))
        return [UInt8](repeating: 7, count: 32) + [0x45, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 16) + [0, 16]
            + [UInt8](repeating: 9, count: 16) + cose
    }

    static func randomValue(_ random: inout SplitMix64, depth: Int) -> CBORValue {
        let kind = random.next() % (depth >= 4 ? 6 : 8)
        switch kind {
        case 0: return .unsigned(randomArgument(&random))
        case 1: return .negative(randomArgument(&random))
        case 2: return .bytes((0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        case 3: return .text(String((0..<Int(random.next() % 12)).map { _ in "aé€𐅑".randomElement(using: &random)! }))
        case 4: return [.bool(true), .bool(false), .null][Int(random.next() % 3)]
        case 5: return .unsigned(random.next() % 24)
        case 6: return .array((0..<Int(random.next() % 5)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var entries: [CBORMapEntry] = []
            var keys = Set<CBORValue>()
            for _ in 0..<Int(random.next() % 5) {
                let key: CBORValue =
                    random.next() % 2 == 0 ? .negative(random.next() % 300) : .text(String(random.next() % 1000, radix: 36))
                guard keys.insert(key).inserted else { continue }
                entries.append(.init(key: key, value: randomValue(&random, depth: depth + 1)))
            }
            return .map(entries)
        }
    }

    /// Integers near each width's boundary, where a wrong shortest-form rule would show.
    static func randomArgument(_ random: inout SplitMix64) -> UInt64 {
        let edges: [UInt64] = [0, 23, 24, 255, 256, 65535, 65536, 0xffff_ffff, 0x1_0000_0000, UInt64.max]
        return random.next() % 2 == 0 ? edges[Int(random.next() % UInt64(edges.count))] : random.next() >> (random.next() % 64)
    }
}

/// A fixed P-256 public point (the generator), so the sample COSE key is on the curve.
enum P256Point {
    static let sample = (
        x: CBORDecoderTests.hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
        y: CBORDecoderTests.hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
    )
}

/// A small seeded generator, so a failing input can be found again.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
