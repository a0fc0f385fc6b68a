import Foundation
import GatehouseAPI

/// A client's `metadata_schema`: a JSON Schema (2020-12) that the user's own properties
/// (`profile.metadata`) must satisfy at sign-up and profile update. Only the keywords in ``keywords``
/// are understood, and a schema using any other one is refused when it is set, so no rule is ever
/// silently skipped. Written by hand: no listed Swift package validates JSON Schema.
public struct MetadataSchema: Sendable, Hashable {
    public static let keywords: Set<String> = [
        "$schema", "title", "description", "type", "properties", "required", "additionalProperties", "enum", "const",
        "minLength", "maxLength", "pattern", "minimum", "maximum", "items", "minItems", "maxItems",
    ]
    static let types: Set<String> = ["object", "array", "string", "number", "integer", "boolean", "null"]
    public static let maxBytes = 16 * 1024

    public let root: JSONValue

    /// Checks that `root` is a schema this validator fully understands.
    public init(_ root: JSONValue) throws {
        try Self.check(root, at: "#")
        self.root = root
    }

    /// A schema checked when it was set (the client settings hold only checked ones): no second check
    /// on every sign-up.
    init(checked root: JSONValue) { self.root = root }

    public init(json: String) throws {
        guard json.utf8.count <= Self.maxBytes else { throw MetadataSchemaError("the schema is over 16 KiB") }
        let value: JSONValue
        do { value = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)) } catch {
            throw MetadataSchemaError("the schema is not JSON")
        }
        try self.init(value)
    }

    private static func check(_ schema: JSONValue, at path: String) throws {
        if case .bool = schema { return }
        guard case .object(let object) = schema else { throw MetadataSchemaError("\(path) is not a schema object") }
        for (keyword, value) in object {
            guard keywords.contains(keyword) else { throw MetadataSchemaError("\(path): the keyword \(keyword) is not supported") }
            switch keyword {
            case "type":
                let names: [JSONValue] = if case .array(let list) = value { list } else { [value] }
                for name in names {
                    guard case .string(let type) = name, types.contains(type) else { throw MetadataSchemaError("\(path): unknown type") }
                }
            case "properties":
                guard case .object(let properties) = value else { throw MetadataSchemaError("\(path)/properties is not an object") }
                for (name, sub) in properties { try check(sub, at: "\(path)/properties/\(name)") }
            case "additionalProperties", "items":
                try check(value, at: "\(path)/\(keyword)")
            case "required":
                guard case .array(let names) = value, names.allSatisfy({ if case .string = $0 { true } else { false } }) else {
                    throw MetadataSchemaError("\(path)/required is not a list of names")
                }
            case "enum":
                guard case .array = value else { throw MetadataSchemaError("\(path)/enum is not a list") }
            case "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum":
                guard case .number = value else { throw MetadataSchemaError("\(path)/\(keyword) is not a number") }
            case "pattern":
                guard case .string(let pattern) = value, (try? NSRegularExpression(pattern: pattern)) != nil else {
                    throw MetadataSchemaError("\(path)/pattern is not a regular expression")
                }
            default: break
            }
        }
    }

    /// Adds a field error for each rule `value` breaks, named from `field` (`profile.metadata.plan`).
    public func validate(_ value: JSONValue, field: String, into result: inout ValidationResult) {
        Self.validate(value, against: root, field: field, into: &result)
    }

    private static func validate(_ value: JSONValue, against schema: JSONValue, field: String, into result: inout ValidationResult) {
        switch schema {
        case .bool(false):
            result.invalidate(field: field, code: .invalidValue, message: "This field is not allowed.")
            return
        case .object(let rules):
            if let type = rules["type"], !matches(value, type) {
                result.invalidate(field: field, code: .invalidType, message: "Use a value of type \(describe(type)).")
                return
            }
            if let allowed = rules["enum"], case .array(let options) = allowed, !options.contains(value) {
                result.invalidate(field: field, code: .invalidValue, message: "Use one of the allowed values.")
            }
            if let constant = rules["const"], constant != value {
                result.invalidate(field: field, code: .invalidValue, message: "Use the required value.")
            }
            switch value {
            case .string(let text):
                if case .number(let min)? = rules["minLength"], Double(text.count) < min {
                    result.invalidate(field: field, code: .tooShort, message: "Use at least \(Int(min)) characters.")
                }
                if case .number(let max)? = rules["maxLength"], Double(text.count) > max {
                    result.invalidate(field: field, code: .tooLong, message: "Use at most \(Int(max)) characters.")
                }
                if case .string(let pattern)? = rules["pattern"], let regex = try? NSRegularExpression(pattern: pattern),
                    regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil
                {
                    result.invalidate(field: field, code: .invalidFormat, message: "This value has the wrong format.")
                }
            case .number(let number):
                if case .number(let min)? = rules["minimum"], number < min {
                    result.invalidate(field: field, code: .invalidValue, message: "Use at least \(format(min)).")
                }
                if case .number(let max)? = rules["maximum"], number > max {
                    result.invalidate(field: field, code: .invalidValue, message: "Use at most \(format(max)).")
                }
            case .array(let items):
                if case .number(let min)? = rules["minItems"], Double(items.count) < min {
                    result.invalidate(field: field, code: .tooShort, message: "Give at least \(Int(min)) items.")
                }
                if case .number(let max)? = rules["maxItems"], Double(items.count) > max {
                    result.invalidate(field: field, code: .tooLong, message: "Give at most \(Int(max)) items.")
                }
                if let itemSchema = rules["items"] {
                    for (index, item) in items.enumerated() {
                        validate(item, against: itemSchema, field: "\(field)[\(index)]", into: &result)
                    }
                }
            case .object(let members):
                if case .array(let required)? = rules["required"] {
                    for case .string(let name) in required where members[name] == nil {
                        result.invalidate(field: "\(field).\(name)", code: .required, message: "This field is required.")
                    }
                }
                var properties: [String: JSONValue] = [:]
                if case .object(let declared)? = rules["properties"] { properties = declared }
                for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                    if let sub = properties[name] {
                        validate(member, against: sub, field: "\(field).\(name)", into: &result)
                    } else if let extra = rules["additionalProperties"] {
                        validate(member, against: extra, field: "\(field).\(name)", into: &result)
                    }
                }
            default: break
            }
        default: return
        }
    }

    private static func matches(_ value: JSONValue, _ type: JSONValue) -> Bool {
        let names: [String] =
            switch type {
            case .string(let name): [name]
            case .array(let list): list.compactMap { if case .string(let name) = $0 { name } else { nil } }
            default: []
            }
        return names.contains { name in
            switch (name, value) {
            case ("object", .object), ("array", .array), ("string", .string), ("number", .number), ("boolean", .bool), ("null", .null): true
            case ("integer", .number(let number)): number.rounded() == number
            default: false
            }
        }
    }

    private static func describe(_ type: JSONValue) -> String {
        switch type {
        case .string(let name): name
        case .array(let list): list.compactMap { if case .string(let name) = $0 { name } else { nil } }.joined(separator: " or ")
        default: "?"
        }
    }
    private static func format(_ number: Double) -> String { number.rounded() == number ? String(Int(number)) : String(number) }
}

public struct MetadataSchemaError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension MetadataSchema {
    /// Checks `metadata` against the client's schema, if it has one.
    static func check(_ metadata: [String: JSONValue]?, client: ClientRecord, into result: inout ValidationResult) {
        guard let root = client.settings.metadataSchema else { return }
        MetadataSchema(checked: root).validate(.object(metadata ?? [:]), field: "profile.metadata", into: &result)
    }
}
