import Foundation
import GatehouseAPI
import NIOCore

/// A JSON object written straight into a response buffer, byte for byte what the wire encoder
/// (`WireCoding.encoder()`: sorted keys, unescaped slashes, ISO 8601 dates) writes for the same value.
/// Foundation's `JSONEncoder` builds a tree of boxed values and sorts every object's keys again on
/// each call: 11 % of a `/v1/me`'s CPU and 6 % of an introspection's went to it, and 5 % of a
/// refresh's to its access token's claims. The types written here (``JSONBodyEncodable``) list their
/// keys in sorted order themselves. Written by hand: no listed package encodes JSON; values this
/// writer does not know (free-form metadata, arrays of objects) still go through the encoder, spliced in.
public struct JSONBodyWriter {
    public private(set) var buffer: ByteBuffer
    /// Whether the object being written has no member yet (no comma before the next key).
    private var empty = true

    public init(capacity: Int = 512) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    /// The value as a whole body.
    public static func body<T: JSONBodyEncodable>(_ value: T) throws -> ByteBuffer {
        var writer = JSONBodyWriter()
        try writer.object { try value.writeMembers(to: &$0) }
        return writer.buffer
    }

    /// Writes `{`, the members `body` writes, and `}`.
    public mutating func object(_ body: (inout JSONBodyWriter) throws -> Void) rethrows {
        let outer = empty
        empty = true
        buffer.writeInteger(UInt8(ascii: "{"))
        try body(&self)
        buffer.writeInteger(UInt8(ascii: "}"))
        empty = outer
    }

    public mutating func key(_ name: StaticString) {
        if !empty { buffer.writeInteger(UInt8(ascii: ",")) }
        empty = false
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(name)
        buffer.writeStaticString("\":")
    }

    public mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    public mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        key(name)
        buffer.writeString(String(value))
    }

    public mutating func member(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        buffer.writeStaticString(value ? "true" : "false")
    }

    public mutating func member(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        key(name)
        buffer.writeInteger(UInt8(ascii: "\""))
        Self.iso8601(value, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    public mutating func member(_ name: StaticString, _ values: [String]?) {
        guard let values else { return }
        key(name)
        buffer.writeInteger(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            string(value)
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// An audience as the wire types write it: one value as a string, any other number as an array.
    public mutating func member(_ name: StaticString, _ audience: Audience?) {
        guard let audience else { return }
        if audience.values.count == 1 { member(name, audience.values[0]) } else { member(name, audience.values) }
    }

    public mutating func member<T: JSONBodyEncodable>(_ name: StaticString, _ value: T?) throws {
        guard let value else { return }
        key(name)
        try object { try value.writeMembers(to: &$0) }
    }

    /// A value this writer does not spell out, through the encoder.
    public mutating func encoded<T: Encodable>(_ name: StaticString, _ value: T?) throws {
        guard let value else { return }
        key(name)
        buffer.writeBytes(try Self.encoder.encode(value))
    }

    private static let encoder = WireCoding.encoder()

    /// A string as Foundation escapes it: `"` and `\` escaped, control characters as `\b \t \n \f \r`
    /// or `\u00xx`, everything else (slashes, DEL, non-ASCII) as its UTF-8 bytes.
    public mutating func string(_ value: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var start = 0
            for i in bytes.indices {
                let byte = bytes[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<i])))
                start = i + 1
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case 0x08: buffer.writeStaticString("\\b")
                case 0x09: buffer.writeStaticString("\\t")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0C: buffer.writeStaticString("\\f")
                case 0x0D: buffer.writeStaticString("\\r")
                default:
                    buffer.writeStaticString("\\u00")
                    buffer.writeInteger(Self.hex[Int(byte >> 4)])
                    buffer.writeInteger(Self.hex[Int(byte & 0x0F)])
                }
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start...])))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC, the seconds floored, as the encoder's `.iso8601` strategy writes
    /// it; a year outside 1…9999 (which that format cannot hold in four digits) is left to Foundation.
    public static func iso8601(_ date: Date, into buffer: inout ByteBuffer) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil, (1...9999).contains(Int(parts.tm_year) + 1900) else {
            buffer.writeString(date.formatted(.iso8601))
            return
        }
        func two(_ n: Int32) {
            buffer.writeInteger(UInt8(48 + n / 10))
            buffer.writeInteger(UInt8(48 + n % 10))
        }
        let year = parts.tm_year + 1900
        two(year / 100)
        two(year % 100)
        buffer.writeInteger(UInt8(ascii: "-"))
        two(parts.tm_mon + 1)
        buffer.writeInteger(UInt8(ascii: "-"))
        two(parts.tm_mday)
        buffer.writeInteger(UInt8(ascii: "T"))
        two(parts.tm_hour)
        buffer.writeInteger(UInt8(ascii: ":"))
        two(parts.tm_min)
        buffer.writeInteger(UInt8(ascii: ":"))
        two(parts.tm_sec)
        buffer.writeInteger(UInt8(ascii: "Z"))
    }
}

/// A wire type ``JSONBodyWriter`` writes without Foundation's encoder. Its members go in sorted key
/// order and must be what its `Encodable` conformance writes; JB-1 to JB-3 compare the two for every
/// such type with every field set.
public protocol JSONBodyEncodable: Encodable {
    func writeMembers(to writer: inout JSONBodyWriter) throws
}
