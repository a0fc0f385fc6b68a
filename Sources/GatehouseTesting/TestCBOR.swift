import GatehouseCore

/// The tests' own canonical CBOR encoder, written from RFC 8949 §3 and §4.2.1 apart from the server's
/// decoder, so a round trip through both checks one against the other, and tests can build the
/// WebAuthn structures no authenticator would send.
public enum TestCBOR {
    public static func encode(_ value: CBORValue) -> [UInt8] {
        func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
            let top = major << 5
            switch argument {
            case 0..<24: return [top | UInt8(argument)]
            case 24...0xff: return [top | 24, UInt8(argument)]
            case 0x100...0xffff: return [top | 25] + withUnsafeBytes(of: UInt16(argument).bigEndian, Array.init)
            case 0x1_0000...0xffff_ffff: return [top | 26] + withUnsafeBytes(of: UInt32(argument).bigEndian, Array.init)
            default: return [top | 27] + withUnsafeBytes(of: argument.bigEndian, Array.init)
            }
        }
        switch value {
        case .unsigned(let n): return head(0, n)
        case .negative(let n): return head(1, n)
        case .bytes(let b): return head(2, UInt64(b.count)) + b
        case .text(let t): return head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .array(let items): return head(4, UInt64(items.count)) + items.flatMap(encode)
        case .map(let entries): return head(5, UInt64(entries.count)) + entries.flatMap { encode($0.key) + encode($0.value) }
        case .bool(let b): return [b ? 0xf5 : 0xf4]
        case .null: return [0xf6]
        }
    }
}
