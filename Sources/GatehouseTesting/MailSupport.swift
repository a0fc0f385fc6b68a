import Foundation
import GatehouseCore

/// What tests read out of a delivered message.
extension OutgoingMessage {
    /// The six-digit code the templates print.
    public var code: String? {
        text.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }.map(String.init)
    }

    /// The first link to the server (a loopback public URL, on any port) in the text part.
    public func link(_ path: String) -> String? {
        var rest = text[...]
        while let start = rest.range(of: "http://127.0.0.1:") {
            let tail = rest[start.lowerBound...]
            let link = String(tail.prefix { !$0.isWhitespace })
            let port = link.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }
            if link.dropFirst("http://127.0.0.1:".count + port.count).hasPrefix(path) { return link }
            rest = rest[start.upperBound...]
        }
        return nil
    }

    /// The path and query of that link, for the in-process router.
    public func linkPath(_ path: String) -> String? {
        link(path).map { link in
            let port = link.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }
            return String(link.dropFirst("http://127.0.0.1:".count + port.count))
        }
    }
}
