import NIOSSL

/// Where and how ``SMTPClient`` delivers mail.
///
/// Build one directly or from a URL with ``parse(url:)``. Its `description`, `debugDescription`
/// and reflection (`dump`) never show the password, so a configuration can be logged as it is.
public struct SMTPConfiguration: Sendable {
    /// How the connection is encrypted.
    public enum Security: String, Sendable, Hashable {
        /// Plain TCP, upgraded with STARTTLS when the server offers it: `smtp://` to a loopback host,
        /// or `smtp://…?starttls=opportunistic` to any other.
        ///
        /// An active attacker can hide the offer; use ``startTLSRequired`` when the relay is known
        /// to support TLS. Once STARTTLS is attempted a failure never falls back to plain text.
        case startTLSIfOffered
        /// Plain TCP that must be upgraded with STARTTLS before anything else is sent: `smtp://` to any
        /// host but loopback, or `smtp://…?starttls=required`.
        case startTLSRequired
        /// TLS from the first byte (`smtps://`, usually port 465).
        case implicitTLS
    }

    /// A username and password for AUTH PLAIN or AUTH LOGIN.
    public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The login name.
        public var username: String
        /// The secret; never printed.
        public var password: String

        /// Creates credentials.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }

        public var description: String { "\(username):<redacted>" }
        public var debugDescription: String { description }
        // `dump` and debuggers use the mirror, which would otherwise list the password.
        public var customMirror: Mirror { Mirror(self, children: ["username": username, "password": "<redacted>"]) }
    }

    /// How the server's certificate is checked.
    ///
    /// The defaults verify fully against the system trust store. Tests can trust a self-signed
    /// certificate with ``additionalTrustRoots`` while keeping full verification.
    public struct TLS: Sendable {
        /// Whether and how strictly the certificate chain and host name are verified.
        public var certificateVerification: CertificateVerification
        /// The trust store certificates must chain to.
        public var trustRoots: NIOSSLTrustRoots
        /// Extra roots trusted on top of ``trustRoots``, such as a private CA or a test certificate.
        public var additionalTrustRoots: [NIOSSLAdditionalTrustRoots]

        /// Creates TLS settings; the defaults verify fully against the system trust store.
        public init(
            certificateVerification: CertificateVerification = .fullVerification,
            trustRoots: NIOSSLTrustRoots = .default,
            additionalTrustRoots: [NIOSSLAdditionalTrustRoots] = []
        ) {
            self.certificateVerification = certificateVerification
            self.trustRoots = trustRoots
            self.additionalTrustRoots = additionalTrustRoots
        }
    }

    /// The relay's host name or IP address (IPv6 without brackets).
    public var host: String
    /// The relay's TCP port.
    public var port: Int
    /// How the connection is encrypted.
    public var security: Security
    /// Credentials for SMTP AUTH, or `nil` to send without authenticating.
    public var credentials: Credentials?
    /// The name announced in EHLO/HELO.
    public var heloName: String
    /// The limit on connecting and on waiting for each reply.
    public var timeout: Duration
    /// Certificate verification settings.
    public var tls: TLS

    /// Creates a configuration.
    public init(
        host: String,
        port: Int,
        security: Security = .startTLSIfOffered,
        credentials: Credentials? = nil,
        heloName: String = "localhost",
        timeout: Duration = .seconds(30),
        tls: TLS = TLS()
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.credentials = credentials
        self.heloName = heloName
        self.timeout = timeout
        self.tls = tls
    }

    /// Throws ``SMTPError/Kind-swift.enum/invalidConfiguration`` if the settings cannot work,
    /// so a bad configuration fails at start-up rather than on the first message.
    func validate() throws {
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else {
            throw SMTPError.invalidConfiguration("the SMTP host is empty or holds spaces, slashes or non-ASCII")
        }
        guard (1...65535).contains(port) else {
            throw SMTPError.invalidConfiguration("the SMTP port \(port) is outside 1–65535")
        }
        // The HELO name goes on the command line verbatim, so it must be one printable token.
        guard !heloName.isEmpty, heloName.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw SMTPError.invalidConfiguration("the HELO name must be a non-empty printable ASCII token")
        }
        guard timeout > .zero else {
            throw SMTPError.invalidConfiguration("the SMTP timeout must be positive")
        }
        if let credentials {
            // They travel base64-encoded inside one command line; NUL would split AUTH PLAIN's fields.
            guard !credentials.username.isEmpty, !credentials.username.contains("\0"),
                !credentials.password.contains("\0")
            else {
                throw SMTPError.invalidConfiguration("SMTP credentials need a username and no NUL characters")
            }
        }
    }
}

extension SMTPConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A URL-like summary such as `smtps://mailer:<redacted>@mail.example.com:465`; never the password.
    public var description: String {
        let scheme = security == .implicitTLS ? "smtps" : "smtp"
        let user = credentials.map { "\($0.username):<redacted>@" } ?? ""
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let query =
            switch security {
            case .startTLSRequired: "?starttls=required"
            // Spelt out where parsing would otherwise require TLS, so the summary parses back the same.
            case .startTLSIfOffered: Self.isLoopback(host) ? "" : "?starttls=opportunistic"
            case .implicitTLS: ""
            }
        return "\(scheme)://\(user)\(hostPart):\(port)\(query)"
    }

    public var debugDescription: String { description }

    // Without this, `dump(configuration)` would print the password through the default mirror.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "host": host, "port": port, "security": security, "credentials": credentials as Any,
                "heloName": heloName, "timeout": timeout,
            ]
        )
    }
}
