import Foundation
import GatehouseAPI
import GatehouseCore

/// `null` for a typed field is refused rather than silently read as "absent": a client that sends
/// `{"scope": null}` or `{"profile": {"metadata": null}}` meant something, and the contract has no
/// "null clears" rule. Values inside free-form `metadata` objects are data and may be null; a request
/// type may name fields whose null is documented as "absent" (the agreement versions). A field the
/// request type does not know is ignored whatever its value, `null` included, as every other unknown
/// field is.
///
/// Written by hand: `JSONDecoder` cannot tell a null from a missing key for optional fields.
enum NullFields {
    /// Throws 422 `invalid_type` naming the first null field outside `allowed` that the request type
    /// reads. `typed(probe)` says whether a body with that null replaced by a value no field type
    /// accepts (`[[[]]]`) fails to decode: only a field the type knows can refuse it. Bodies without
    /// the token `null` anywhere cost one byte scan.
    static func reject(in body: Data, allowing allowed: Set<String>, typed: (Data) -> Bool) throws {
        guard mayContainNull(body),
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        else { return }
        for path in nulls(in: object, path: [], allowed: allowed) {
            guard let probe = try? JSONSerialization.data(withJSONObject: replacing(path, in: object, with: [[[Any]]()])),
                typed(probe)
            else { continue }
            let field = path.map { $0.description }.joined(separator: ".")
            throw GatehouseError.validation(
                field: field, code: .invalidType, message: "\(field) must not be null; leave it out instead.")
        }
    }

    /// One step of a path into a JSON value.
    enum Step: CustomStringConvertible {
        case key(String)
        case index(Int)

        var description: String {
            switch self {
            case .key(let key): key
            case .index(let index): String(index)
            }
        }
    }

    /// `value` with the element at `path` replaced.
    private static func replacing(_ path: ArraySlice<Step>, in value: Any, with replacement: Any) -> Any {
        guard let step = path.first else { return replacement }
        switch (step, value) {
        case (.key(let key), var object as [String: Any]):
            object[key] = replacing(path.dropFirst(), in: object[key] as Any, with: replacement)
            return object
        case (.index(let index), var array as [Any]) where array.indices.contains(index):
            array[index] = replacing(path.dropFirst(), in: array[index], with: replacement)
            return array
        default:
            return value
        }
    }

    private static func replacing(_ path: [Step], in value: Any, with replacement: Any) -> Any {
        replacing(path[...], in: value, with: replacement)
    }

    private static func mayContainNull(_ body: Data) -> Bool {
        let token = Array("null".utf8)
        return body.withUnsafeBytes { raw in
            guard raw.count >= 4 else { return false }
            for index in 0...(raw.count - 4) where raw[index] == token[0] {
                if raw[index + 1] == token[1], raw[index + 2] == token[2], raw[index + 3] == token[3] { return true }
            }
            return false
        }
    }

    /// Every null below `value`, in key order, except those `allowed` and inside free-form metadata.
    private static func nulls(in value: Any, path: [Step], allowed: Set<String>) -> [[Step]] {
        if value is NSNull {
            let field = path.map { $0.description }.joined(separator: ".")
            return allowed.contains(field) || path.isEmpty ? [] : [path]
        }
        if let object = value as? [String: Any] {
            return object.keys.sorted().flatMap { key -> [[Step]] in
                let element = object[key]!
                // Free-form JSON: only the field itself is typed (an object), not what it holds.
                if key == "metadata", !(element is NSNull) { return [] }
                return nulls(in: element, path: path + [.key(key)], allowed: allowed)
            }
        }
        // Arrays of typed values (scopes, methods): a null element is as wrong as a null field.
        if let array = value as? [Any] {
            return array.enumerated().flatMap { nulls(in: $1, path: path + [.index($0)], allowed: allowed) }
        }
        return []
    }
}
