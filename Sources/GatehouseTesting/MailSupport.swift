import Foundation
import GatehouseCore

/// What tests read out of a delivered message.
extension OutgoingMessage {
    /// The six-digit code the templates print.
    public var code: String? {
        text.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }.map(String.init)
    }

    /// The first link to the server in the text part.
    public func link(_ path: String) -> String? {
        guard let start = text.range(of: "http://127.0.0.1:8080" + path) else { return nil }
        let tail = text[start.lowerBound...]
        return String(tail.prefix { !$0.isWhitespace })
    }

    /// The path and query of that link, for the in-process router.
    public func linkPath(_ path: String) -> String? {
        link(path).map { String($0.dropFirst("http://127.0.0.1:8080".count)) }
    }
}
