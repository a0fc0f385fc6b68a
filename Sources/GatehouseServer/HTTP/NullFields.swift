import Foundation
import GatehouseAPI
import GatehouseCore

/// `null` for a typed field is refused rather than silently read as "absent": a client that sends
/// `{"scope": null}` or `{"profile": {"metadata": null}}` meant something, and the contract has no
/// "null clears" rule. Values inside free-form `metadata` objects are data and may be null; a request
/// type may name fields whose null is documented as "absent" (the agreement versions).
///
/// Written by hand: `JSONDecoder` cannot tell a null from a missing key for optional fields.
enum NullFields {
    /// Throws 422 `invalid_type` naming the first null field outside `allowed`. Bodies without the
    /// token `null` anywhere cost one byte scan.
    static func reject(in body: Data, allowing allowed: Set<String>) throws {
        guard mayContainNull(body),
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        else { return }
        if let path = firstNull(in: object, path: "", allowed: allowed) {
            throw GatehouseError.validation(
                field: path, code: .invalidType, message: "\(path) must not be null; leave it out instead.")
        }
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

    private static func firstNull(in value: Any, path: String, allowed: Set<String>) -> String? {
        if value is NSNull { return allowed.contains(path) || path.isEmpty ? nil : path }
        if let object = value as? [String: Any] {
            for key in object.keys.sorted() {
                let child = path.isEmpty ? key : "\(path).\(key)"
                let element = object[key]!
                // Free-form JSON: only the field itself is typed (an object), not what it holds.
                if key == "metadata", !(element is NSNull) { continue }
                guard let found = firstNull(in: element, path: child, allowed: allowed) else { continue }
                return found
            }
            return nil
        }
        // Arrays of typed values (scopes, methods): a null element is as wrong as a null field.
        if let array = value as? [Any] {
            for (index, element) in array.enumerated() {
                if let found = firstNull(in: element, path: "\(path).\(index)", allowed: allowed) { return found }
            }
        }
        return nil
    }
}
