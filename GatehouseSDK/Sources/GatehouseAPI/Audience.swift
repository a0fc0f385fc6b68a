/// A JWT or introspection `aud`: one string, or an array of them (RFC 7519 §4.1.3, RFC 7662 §2.2).
/// One value is written as a plain string, as most resource servers and libraries expect.
public struct Audience: Codable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var values: [String]

    public init(_ values: [String]) { self.values = values }
    public init(stringLiteral value: String) { self.values = [value] }

    public func contains(_ value: String) -> Bool { values.contains(value) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            values = [one]
        } else {
            values = try container.decode([String].self)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if values.count == 1 { try container.encode(values[0]) } else { try container.encode(values) }
    }
}
