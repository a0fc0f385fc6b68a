import Foundation
extension SMTPConfiguration {
    /// Parses `smtp://[user:password@]host[:port][?starttls=required]` or
    /// `smtps://[user:password@]host[:port]`.
    ///
    /// - `smtp` means ``Security-swift.enum/startTLSIfOffered`` (default port 25; 587 works too),
    ///   or ``Security-swift.enum/startTLSRequired`` with `?starttls=required`.
    /// - `smtps` means ``Security-swift.enum/implicitTLS`` (default port 465).
    /// - The username and password are percent-decoded, so `p%40ss` is `p@ss`.
    /// - IPv6 hosts go in brackets: `smtp://[::1]:2525`.
    ///
    /// Everything else (another scheme, a path, other query options, a fragment, a bad port)
    /// throws ``SMTPError`` of kind ``SMTPError/Kind-swift.enum/invalidConfiguration``. Error
    /// messages never repeat the URL, since it may hold a password.
    ///
    /// - Parameters:
    ///   - url: The SMTP URL.
    ///   - heloName: The name announced in EHLO.
    ///   - timeout: The limit on connecting and on each reply.
    ///   - tls: Certificate verification settings.
    public static func parse(
        url: String,
        heloName: String = "localhost",
        timeout: Duration = .seconds(30),
        tls: TLS = TLS()
    ) throws -> SMTPConfiguration {
        guard let schemeEnd = url.range(of: "://") else {
            throw SMTPError.invalidConfiguration("an SMTP URL starts with smtp:// or smtps://")
        }
        let security: Security
        let defaultPort: Int
        switch url[..<schemeEnd.lowerBound].lowercased() {
        case "smtp": (security, defaultPort) = (.startTLSIfOffered, 25)
        case "smtps": (security, defaultPort) = (.implicitTLS, 465)
        case let other:
            throw SMTPError.invalidConfiguration("unsupported SMTP URL scheme '\(other)': use smtp:// or smtps://")
        }

        var rest = url[schemeEnd.upperBound...]
        if rest.contains("#") {
            throw SMTPError.invalidConfiguration("an SMTP URL cannot have a fragment")
        }
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        // Only an empty path is meaningful; the userinfo may not hold a raw '/' either.
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...] == "/" else {
                throw SMTPError.invalidConfiguration("an SMTP URL cannot have a path")
            }
            rest = rest[..<slash]
        }

        var credentials: Credentials?
        var hostPort = rest
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            hostPort = rest[rest.index(after: at)...]
            guard let colon = userInfo.firstIndex(of: ":") else {
                throw SMTPError.invalidConfiguration("the SMTP URL has a username without a password")
            }
            let username = try percentDecoded(userInfo[..<colon], what: "username")
            let password = try percentDecoded(userInfo[userInfo.index(after: colon)...], what: "password")
            guard !username.isEmpty else {
                throw SMTPError.invalidConfiguration("the SMTP URL has an empty username")
            }
            credentials = Credentials(username: username, password: password)
        }

        let (host, port) = try splitHostPort(hostPort, defaultPort: defaultPort)
        var configuration = SMTPConfiguration(
            host: host,
            port: port,
            security: security,
            credentials: credentials,
            heloName: heloName,
            timeout: timeout,
            tls: tls
        )
        if security == .startTLSIfOffered {
            // TLS is required except to this machine, where nobody sits in between. A relay that
            // cannot do TLS must be asked for by name: `?starttls=opportunistic`.
            configuration.security = isLoopback(host) ? .startTLSIfOffered : .startTLSRequired
        }
        if let query, !query.isEmpty {
            guard security == .startTLSIfOffered else {
                throw SMTPError.invalidConfiguration("smtps:// takes no options; ?starttls=… is for smtp://")
            }
            switch query.lowercased() {
            case "starttls=required": configuration.security = .startTLSRequired
            case "starttls=opportunistic": configuration.security = .startTLSIfOffered
            default:
                throw SMTPError.invalidConfiguration(
                    "the only SMTP URL options are ?starttls=required and ?starttls=opportunistic, with smtp://")
            }
        }
        try configuration.validate()
        return configuration
    }

    private static func splitHostPort(_ text: Substring, defaultPort: Int) throws -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw SMTPError.invalidConfiguration("the SMTP URL has an unclosed '[' in its host")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw SMTPError.invalidConfiguration("unexpected text after the SMTP URL's IPv6 host")
                }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        guard !host.isEmpty else {
            throw SMTPError.invalidConfiguration("the SMTP URL has no host")
        }
        var port = defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
                let value = Int(portText), (1...65535).contains(value)
            else {
                throw SMTPError.invalidConfiguration("the SMTP URL's port '\(portText)' is not a number in 1–65535")
            }
            port = value
        }
        return (String(host), port)
    }

    /// Decodes `%XX` escapes as UTF-8; `what` names the field in errors instead of echoing a secret.
    private static func percentDecoded(_ text: Substring, what: String) throws -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw SMTPError.invalidConfiguration("the SMTP URL's \(what) has a malformed %-escape")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw SMTPError.invalidConfiguration("the SMTP URL's \(what) is not valid UTF-8 once %-decoded")
        }
        return decoded
    }

    /// `localhost`, 127.0.0.0/8 and ::1: hosts whose traffic never leaves the machine.
    public static func isLoopback(_ host: String) -> Bool {
        let lower = host.lowercased()
        return lower == "localhost" || lower == "::1" || lower == "0:0:0:0:0:0:0:1" || lower.hasPrefix("127.")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }

}
