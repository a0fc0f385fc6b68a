import Foundation
import GatehouseAPI
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOFoundationEssentialsCompat
import Yams

/// The served OpenAPI document, and a check of real answers against it. The schema check covers the
/// keywords the document uses: $ref, type (with null), required, properties, additionalProperties,
/// items, enum, oneOf, allOf.
struct OpenAPIDocument {
    let root: [String: Any]

    init(yaml: String) throws {
        guard let root = Self.normalize(try Yams.load(yaml: yaml)) as? [String: Any] else {
            throw Failure("the document is not a mapping")
        }
        self.root = root
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Problems with `response` as the answer to `method path`; empty when it conforms.
    func check(method: String, path: String, response: TestResponse) -> [String] {
        let label = "\(method.uppercased()) \(path) → \(response.status.code)"
        guard let paths = root["paths"] as? [String: Any],
            let (template, item) = paths.first(where: { Self.matches(template: $0.key, path: path) }),
            let operation = resolve(item as? [String: Any])?[method.lowercased()] as? [String: Any]
        else { return ["\(label): no such operation in the document"] }
        guard let responses = operation["responses"] as? [String: Any],
            let documented = resolve((responses[String(response.status.code)] ?? responses["default"]) as? [String: Any])
        else { return ["\(label): status not documented for \(template)"] }
        var problems: [String] = []
        for (name, header) in (documented["headers"] as? [String: Any]) ?? [:] {
            if resolve(header as? [String: Any])?["required"] as? Bool == true,
                response.headers.first(where: { $0.name.canonicalName == name.lowercased() }) == nil
            {
                problems.append("\(label): required header \(name) missing")
            }
        }
        guard let content = documented["content"] as? [String: Any] else {
            if response.body.readableBytes > 0 { problems.append("\(label): body not documented") }
            return problems
        }
        let contentType = response.headers[.contentType]?.split(separator: ";").first.map(String.init) ?? ""
        guard let media = content[contentType] as? [String: Any] else {
            return problems + ["\(label): content type \(contentType) not documented (\(content.keys.sorted()))"]
        }
        guard contentType.hasSuffix("json"), let schema = media["schema"] as? [String: Any] else { return problems }
        do {
            let value = try WireCoding.decoder().decode(JSONValue.self, from: Data(buffer: response.body))
            return problems + validate(value, schema, at: "$").map { "\(label): \($0)" }
        } catch {
            return problems + ["\(label): body is not JSON"]
        }
    }

    func validate(_ value: JSONValue, _ schema: [String: Any], at path: String) -> [String] {
        let schema = resolve(schema) ?? schema
        if let options = schema["oneOf"] as? [[String: Any]] {
            let matching = options.filter { validate(value, $0, at: path).isEmpty }.count
            if matching != 1 { return ["\(path): matches \(matching) of the oneOf schemas"] }
        }
        var problems: [String] = []
        for part in (schema["allOf"] as? [[String: Any]]) ?? [] { problems += validate(value, part, at: path) }
        if let type = schema["type"] {
            let allowed = (type as? [String]) ?? [(type as? String) ?? ""]
            if !allowed.contains(where: { Self.isType(value, $0) }) {
                return problems + ["\(path): expected \(allowed.joined(separator: "|")), got \(value)"]
            }
        }
        if let options = schema["enum"] as? [Any], case .string(let s) = value, !options.contains(where: { ($0 as? String) == s }) {
            problems.append("\(path): \(s) is not one of \(options)")
        }
        switch value {
        case .object(let object):
            for key in (schema["required"] as? [String]) ?? [] where object[key] == nil {
                problems.append("\(path): required property \(key) missing")
            }
            let properties = (schema["properties"] as? [String: Any]) ?? [:]
            for (key, child) in object {
                if let childSchema = properties[key] as? [String: Any] {
                    problems += validate(child, childSchema, at: "\(path).\(key)")
                } else if let extra = schema["additionalProperties"] as? [String: Any] {
                    problems += validate(child, extra, at: "\(path).\(key)")
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path): unexpected property \(key)")
                }
            }
        case .array(let items):
            if let itemSchema = schema["items"] as? [String: Any] {
                for (index, item) in items.enumerated() { problems += validate(item, itemSchema, at: "\(path)[\(index)]") }
            }
        default: break
        }
        return problems
    }

    private func resolve(_ node: [String: Any]?) -> [String: Any]? {
        guard let node else { return nil }
        guard let ref = node["$ref"] as? String, ref.hasPrefix("#/") else { return node }
        var current: Any = root
        for part in ref.dropFirst(2).split(separator: "/") {
            guard let next = (current as? [String: Any])?[String(part)] else { return nil }
            current = next
        }
        return resolve(current as? [String: Any])
    }

    private static func isType(_ value: JSONValue, _ type: String) -> Bool {
        switch (value, type) {
        case (.null, "null"), (.bool, "boolean"), (.string, "string"), (.array, "array"), (.object, "object"),
            (.number, "number"):
            return true
        case (.number(let n), "integer"): return n.rounded() == n
        default: return false
        }
    }

    static func matches(template: String, path: String) -> Bool {
        let t = template.split(separator: "/", omittingEmptySubsequences: false)
        let p = path.split(separator: "?").first.map { $0.split(separator: "/", omittingEmptySubsequences: false) } ?? []
        return t.count == p.count && zip(t, p).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
    }

    /// Yams gives `[AnyHashable: Any]`; keys like `200` may be numbers.
    private static func normalize(_ node: Any?) -> Any? {
        switch node {
        case let map as [AnyHashable: Any]:
            var out: [String: Any] = [:]
            for (key, value) in map { out[String(describing: key.base)] = normalize(value) }
            return out
        case let map as [String: Any]:
            return map.mapValues { normalize($0) as Any }
        case let list as [Any]:
            return list.map { normalize($0) as Any }
        default:
            return node
        }
    }
}
