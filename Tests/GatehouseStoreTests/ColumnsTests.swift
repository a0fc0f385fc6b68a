import Foundation
import GatehouseAPI
import GatehouseTesting
@testable import GatehouseStore
import SQLKit
import Testing

@Suite("Column codecs")
struct ColumnsTests {
    @Test("String arrays: the fast split agrees with JSONDecoder on every shape, odd ones included")
    func stringArrays() throws {
        let arrays: [[String]] = [
            [], [""], ["openid"], ["openid", "email", "profile"], ["a,b"], ["a\",\"b"], ["quote\"inside"],
            ["back\\slash"], ["spa ce"], ["ü", "日本"], ["", "x", ""], ["[", "]"], [","],
        ]
        for array in arrays {
            let text = String(decoding: try JSONEncoder().encode(array), as: UTF8.self)
            #expect(try Columns.decodeStrings(text) == array, "\(text)")
        }
        for text in [#"[ "a" , "b" ]"#, #"["\u0041"]"#] {
            #expect(try Columns.decodeStrings(text) == JSONDecoder().decode([String].self, from: Data(text.utf8)))
        }
        // Whatever JSONDecoder makes of a trailing comma, the fast path defers to it.
        #expect(
            try Columns.decodeStrings(#"["a",]"#) == (try? JSONDecoder().decode([String].self, from: Data(#"["a",]"#.utf8))) ?? ["<threw>"])
        #expect(throws: (any Error).self) { try Columns.decodeStrings("[a]") }
    }

    @Test("A profile reads the same through the empty-profile shortcut as through JSONDecoder")
    func profiles() throws {
        let empty = String(decoding: try JSONEncoder().encode(Profile()), as: UTF8.self)
        #expect(empty == "{}")
        #expect(try Columns.decodeProfile(empty) == Profile())
        let full = Profile(name: "Ada Lovelace", givenName: "Ada", metadata: ["team": .string("engines")])
        let text = String(decoding: try JSONEncoder().encode(full), as: UTF8.self)
        #expect(try Columns.decodeProfile(text) == full)
        #expect(try Columns.decodeProfile("{ }") == Profile())
        #expect(throws: (any Error).self) { try Columns.decodeProfile("{") }
    }

    @Test(
        "COL-1: nullable columns read through each driver: null is nil, a value is itself, a column the row lacks throws",
        arguments: TestDatabase.available)
    func nullableColumns(database: TestDatabase) async throws {
        try await PersistenceContractTests.withPersistence(database) { db in
            let read: [String] = try await db.readDatabase { sql in
                let row = try #require(
                    try await sql.raw("SELECT CAST(NULL AS TEXT) AS a, 'x' AS b, CAST(5 AS BIGINT) AS c, CAST(NULL AS BIGINT) AS d").first()
                )
                var missing: [String] = []
                for read in [{ _ = try row.optionalString("absent") }, { _ = try row.optionalInt("absent") }] {
                    do { try read() } catch StoreDecodingError.missingColumn(let column) { missing.append(column) }
                }
                return [
                    "\(String(describing: try row.optionalString("a")))", "\(String(describing: try row.optionalString("b")))",
                    "\(String(describing: try row.optionalInt("c")))", "\(String(describing: try row.optionalInt("d")))",
                ] + missing
            }
            #expect(read == ["nil", #"Optional("x")"#, "Optional(5)", "nil", "absent", "absent"])
        }
    }
}
