import Foundation
import GatehouseAPI
import GatehouseCore
import Testing

@Suite("A client's metadata schema")
struct MetadataSchemaTests {
    static let schema = """
        {"type": "object", "required": ["plan"], "additionalProperties": false,
         "properties": {"plan": {"enum": ["free", "pro"]}, "nickname": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
                        "seats": {"type": "integer", "minimum": 1, "maximum": 10},
                        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}}}}
        """

    func errors(_ json: String) throws -> [String: String] {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        var result = ValidationResult()
        try MetadataSchema(json: Self.schema).validate(value, field: "profile.metadata", into: &result)
        return Dictionary(result.errors.map { ($0.field ?? "", $0.code.rawValue) }) { first, _ in first }
    }

    @Test("MS-1: each supported keyword refuses what breaks it, with the field's path and a field code, and passes what keeps it")
    func keywords() throws {
        #expect(try errors(#"{"plan": "pro", "nickname": "pat", "seats": 3, "tags": ["a"]}"#).isEmpty)
        #expect(try errors(#"{}"#) == ["profile.metadata.plan": "required"])
        #expect(try errors(#"{"plan": "gold"}"#) == ["profile.metadata.plan": "invalid_value"])
        #expect(try errors(#"{"plan": "free", "nickname": "toolong"}"#) == ["profile.metadata.nickname": "too_long"])
        #expect(try errors(#"{"plan": "free", "nickname": "Pat"}"#) == ["profile.metadata.nickname": "invalid_format"])
        #expect(try errors(#"{"plan": "free", "seats": 2.5}"#) == ["profile.metadata.seats": "invalid_type"])
        #expect(try errors(#"{"plan": "free", "seats": 11}"#) == ["profile.metadata.seats": "invalid_value"])
        #expect(try errors(#"{"plan": "free", "tags": ["a", 1]}"#) == ["profile.metadata.tags[1]": "invalid_type"])
        #expect(try errors(#"{"plan": "free", "tags": ["a", "b", "c"]}"#) == ["profile.metadata.tags": "too_long"])
        #expect(try errors(#"{"plan": "free", "shoe": 42}"#) == ["profile.metadata.shoe": "invalid_value"])
    }

    @Test("MS-2: a schema with a keyword it does not understand, a bad pattern or a bad type is refused when it is set")
    func refusedSchemas() {
        for bad in [#"{"oneOf": []}"#, #"{"pattern": "("}"#, #"{"type": "text"}"#, #"{"properties": {"a": 3}}"#, "not json"] {
            #expect(throws: MetadataSchemaError.self) { try MetadataSchema(json: bad) }
        }
    }
}
