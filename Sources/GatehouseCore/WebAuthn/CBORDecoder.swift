import Foundation

/// A strict CBOR decoder for WebAuthn. Hand-written: no package in the mirror decodes CBOR.
///
/// Strict means an encoding either has exactly one reading or is refused:
/// - every length and integer argument in its shortest form (RFC 8949 §4.2.1), definite lengths only;
/// - no floats, tags, `undefined` or other simple values; text is valid UTF-8;
/// - map keys are integers or text and unique;
/// - nesting at most ``maximumDepth`` deep, and no container claims more items than bytes remain, so
///   a five-byte input cannot make it reserve gigabytes;
/// - ``decode(_:)`` refuses trailing bytes; ``decodePrefix(_:from:)`` reports where the item ended,
///   for the credential key inside authenticator data that extensions may follow.
///
/// Map keys need not be in canonical order: CTAP2 asks authenticators for it, but the attestation
/// statements some shipped security keys produce are not sorted, and the order carries no meaning here.
public enum CBORDecoder {
    /// Deep enough for every WebAuthn structure (an attestation object is three levels; extensions add
    /// a few), shallow enough that recursion stays a few kilobytes of stack.
    public static let maximumDepth = 16

    public static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBORValue {
        var reader = Reader(bytes: bytes, position: 0)
        let value = try reader.item(depth: 0)
        guard reader.position == bytes.count else { throw .trailingBytes(bytes.count - reader.position) }
        return value
    }

    /// Decodes the item starting at `offset`; returns it and the offset just after it.
    public static func decodePrefix(_ bytes: [UInt8], from offset: Int) throws(CBORError) -> (CBORValue, Int) {
        guard offset >= 0, offset <= bytes.count else { throw .truncated }
        var reader = Reader(bytes: bytes, position: offset)
        let value = try reader.item(depth: 0)
        return (value, reader.position)
    }

    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        var remaining: Int { bytes.count - position }

        mutating func byte() throws(CBORError) -> UInt8 {
            guard position < bytes.count else { throw .truncated }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ count: Int) throws(CBORError) -> ArraySlice<UInt8> {
            guard count <= remaining else { throw .truncated }
            defer { position += count }
            return bytes[position..<position + count]
        }

        /// The argument that follows an initial byte's additional information, in its shortest form.
        mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let width = 1 << Int(info - 24)
                var value: UInt64 = 0
                for b in try take(width) { value = value << 8 | UInt64(b) }
                // The smallest value that needs this width; anything below it had a shorter encoding.
                let floor: UInt64 = info == 24 ? 24 : 1 << (UInt64(width) * 4)
                guard value >= floor else { throw .nonCanonical }
                return value
            case 31: throw .indefiniteLength
            default: throw .reserved(info)
            }
        }

        /// A count or length that must fit in what is left of the input (each item is at least a byte).
        mutating func length(_ info: UInt8) throws(CBORError) -> Int {
            let value = try argument(info)
            guard value <= UInt64(remaining) else { throw .truncated }
            return Int(value)
        }

        mutating func item(depth: Int) throws(CBORError) -> CBORValue {
            guard depth <= CBORDecoder.maximumDepth else { throw .tooDeep }
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1f
            switch major {
            case 0: return .unsigned(try argument(info))
            case 1: return .negative(try argument(info))
            case 2: return .bytes(Array(try take(try length(info))))
            case 3:
                let raw = try take(try length(info))
                guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
                return .text(text)
            case 4:
                let count = try length(info)
                var items: [CBORValue] = []
                items.reserveCapacity(count)
                for _ in 0..<count { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                let count = try length(info)
                guard count <= remaining / 2 else { throw .truncated }
                var entries: [CBORMapEntry] = []
                entries.reserveCapacity(count)
                var keys = Set<CBORValue>()
                for _ in 0..<count {
                    let key = try item(depth: depth + 1)
                    switch key {
                    case .unsigned, .negative, .text: break
                    default: throw .unsupportedMapKey
                    }
                    guard keys.insert(key).inserted else { throw .duplicateMapKey }
                    entries.append(CBORMapEntry(key: key, value: try item(depth: depth + 1)))
                }
                return .map(entries)
            case 6: throw .unsupported("tag")
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 25, 26, 27: throw .unsupported("float")
                case 31: throw .indefiniteLength
                default: throw .unsupported("simple value \(info)")
                }
            }
        }
    }
}

/// Why bytes are not a CBOR item the decoder accepts.
public enum CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    case truncated
    case trailingBytes(Int)
    case nonCanonical
    case indefiniteLength
    case reserved(UInt8)
    case tooDeep
    case invalidUTF8
    case unsupportedMapKey
    case duplicateMapKey
    case unsupported(String)

    public var description: String {
        switch self {
        case .truncated: "the CBOR ends inside an item"
        case .trailingBytes(let n): "\(n) bytes follow the CBOR item"
        case .nonCanonical: "a CBOR length or integer is not in its shortest form"
        case .indefiniteLength: "indefinite-length CBOR is not accepted"
        case .reserved(let info): "reserved CBOR additional information \(info)"
        case .tooDeep: "CBOR nested deeper than \(CBORDecoder.maximumDepth)"
        case .invalidUTF8: "a CBOR text string is not UTF-8"
        case .unsupportedMapKey: "a CBOR map key is neither an integer nor text"
        case .duplicateMapKey: "a CBOR map repeats a key"
        case .unsupported(let kind): "CBOR \(kind) is not accepted"
        }
    }
}
