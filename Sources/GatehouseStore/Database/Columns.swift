import Foundation
import GatehouseAPI
import SQLKit

/// Column encodings shared by both databases: times as Unix milliseconds (BIGINT), UUIDs and JSON as
/// TEXT, booleans as 0/1. Portable types keep one migration list for both dialects.
enum Columns {
    // Rounded down, never to the nearest: a time that comes back from a row must fall in the same second
    // as the one kept in memory, or a token's `auth_time` would differ by one between the sign-in that
    // made it and a later one that read it back.
    static func millis(_ date: Date) -> Int { Int((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    static func millis(_ date: Date?) -> Int? { date.map(millis) }
    static func date(_ millis: Int) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }

    static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    /// A JSON array of plain strings (scopes, amr) as this store writes it: `["a","b"]`. Split directly
    /// when no character needs JSON's rules (escapes, spaces); anything else goes through JSONDecoder.
    /// Decoding these for every bearer request through JSONDecoder was 5 % of an introspection; split
    /// as characters through Foundation's `contains`, 2 % of a `/v1/me`: so bytes.
    static func decodeStrings(_ text: String) throws -> [String] {
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        let bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]"),
            !bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: " ") })
        else { return try decodeJSON([String].self, text) }
        let inner = bytes[1..<(bytes.count - 1)]
        if inner.isEmpty { return [] }
        var out: [String] = []
        for item in inner.split(separator: comma, omittingEmptySubsequences: false) {
            guard item.count >= 2, item.first == quote, item.last == quote else { return try decodeJSON([String].self, text) }
            let value = item.dropFirst().dropLast()
            // A quote inside means a comma was inside a string: not the simple shape after all.
            guard !value.contains(quote) else { return try decodeJSON([String].self, text) }
            out.append(String(decoding: value, as: UTF8.self))
        }
        return out
    }

    /// A user's profile column. Most users have none (`{}`, as ``json(_:)`` writes an empty one): that
    /// is answered without a JSON decoder, which was 2 % of a `/v1/me`.
    static func decodeProfile(_ text: String) throws -> Profile {
        text == "{}" ? Profile() : try decodeJSON(Profile.self, text)
    }

    static func id(_ uuid: UUID) -> String { uuid.uuidString.lowercased() }

    private static let decoder = JSONDecoder()
    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }()
}

extension SQLRow {
    func string(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    // An optional is asked as "is it null?" and then as its wrapped type: decoding `String?` itself goes
    // through the drivers' generic decoder for every column, and was 1 % of a `/v1/me`.
    func optionalString(_ column: String) throws -> String? { try isNull(column) ? nil : string(column) }
    func int(_ column: String) throws -> Int { try decode(column: column, as: Int.self) }
    func optionalInt(_ column: String) throws -> Int? { try isNull(column) ? nil : int(column) }
    /// Both drivers answer `decodeNil` with true for a column the row does not have; decoding an
    /// optional threw for that, and still does: a query that forgot a column is a bug, not a null.
    private func isNull(_ column: String) throws -> Bool {
        guard try decodeNil(column: column) else { return false }
        guard contains(column: column) else { throw StoreDecodingError.missingColumn(column) }
        return true
    }
    func bool(_ column: String) throws -> Bool { try int(column) != 0 }
    func date(_ column: String) throws -> Date { Columns.date(try int(column)) }
    func optionalDate(_ column: String) throws -> Date? { try optionalInt(column).map(Columns.date) }
    func uuid(_ column: String) throws -> UUID {
        let text = try string(column)
        guard let value = UUID(uuidString: text) else { throw StoreDecodingError.badUUID(column) }
        return value
    }
    func optionalUUID(_ column: String) throws -> UUID? {
        guard let text = try optionalString(column) else { return nil }
        guard let value = UUID(uuidString: text) else { throw StoreDecodingError.badUUID(column) }
        return value
    }
}

enum StoreDecodingError: Error {
    case badUUID(String)
    case missingColumn(String)
    case badValue(String)
}
