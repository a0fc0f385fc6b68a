import SQLKit
import SQLiteKit

/// A statement's column names and where each is, made once when the statement is prepared and
/// shared by every row it returns.
final class CachingSQLiteColumns: Sendable {
    let names: [String]
    private let offsets: [String: Int]

    init(_ names: [String]) {
        self.names = names
        // The first of two equal names wins, as in sqlite-nio's rows.
        var offsets: [String: Int] = [:]
        for (offset, name) in names.enumerated() where offsets[name] == nil { offsets[name] = offset }
        self.offsets = offsets
    }

    func offset(of name: String) -> Int? { offsets[name] }
}

/// One row read by an ``CachingSQLiteConnection``, answering as SQLiteKit's rows do: a column the row lacks reads
/// as null through `decodeNil` and throws through `decode`.
struct CachingSQLiteRow: SQLRow {
    let columns: CachingSQLiteColumns
    let values: [SQLiteData]

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.offset(of: column) != nil }

    func decodeNil(column: String) throws -> Bool {
        guard let offset = columns.offset(of: column) else { return true }
        return values[offset] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let offset = columns.offset(of: column) else { throw StoreDecodingError.missingColumn(column) }
        return try Self.decoder.decode(D.self, from: values[offset])
    }

    // One decoder for every row: SQLiteKit makes a new one (and its JSONDecoder) per query.
    private static let decoder = SQLiteDataDecoder()
}
