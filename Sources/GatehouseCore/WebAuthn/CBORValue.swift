import Foundation

/// One CBOR data item (RFC 8949) of the kinds WebAuthn uses: integers, byte and text strings, arrays,
/// maps, booleans and null. Floats, tags and `undefined` are refused by ``CBORDecoder``: no attestation
/// object, COSE key or extension output WebAuthn defines carries them.
public indirect enum CBORValue: Sendable, Hashable {
    case unsigned(UInt64)
    /// The integer `-1 - n`, kept as `n` so every CBOR negative fits.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Entries in the order they were encoded; keys are unique (the decoder refuses duplicates).
    case map([CBORMapEntry])
    case bool(Bool)
    case null

    /// The value as an `Int`, when it is an integer that fits.
    public var int: Int? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: nil
        }
    }

    public var bytes: [UInt8]? {
        if case .bytes(let b) = self { return b }
        return nil
    }

    public var text: String? {
        if case .text(let t) = self { return t }
        return nil
    }

    public var array: [CBORValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var mapEntries: [CBORMapEntry]? {
        if case .map(let m) = self { return m }
        return nil
    }

    /// The value under `key` in a map (nil for a missing key or a value that is not a map).
    public subscript(key: CBORValue) -> CBORValue? {
        mapEntries?.first { $0.key == key }?.value
    }

    public subscript(int key: Int) -> CBORValue? { self[key < 0 ? .negative(UInt64(-1 - key)) : .unsigned(UInt64(key))] }

    public subscript(text key: String) -> CBORValue? { self[.text(key)] }
}

/// A map entry; a pair rather than a dictionary so the encoded order survives (it is reported by
/// nothing today, but a re-encoding check would need it).
public struct CBORMapEntry: Sendable, Hashable {
    public var key: CBORValue
    public var value: CBORValue

    public init(key: CBORValue, value: CBORValue) {
        self.key = key
        self.value = value
    }
}
