import GatehouseSMTP
import Testing

struct SMTPConfigurationTests {
    @Test func parsesSMTPAndSMTPSURLs() throws {
        let plain = try SMTPConfiguration.parse(url: "smtp://mail.example.com")
        #expect(plain.host == "mail.example.com")
        #expect(plain.port == 25)
        // TLS is required to any host but loopback unless asked otherwise by name (G20).
        #expect(plain.security == .startTLSRequired)
        #expect(try SMTPConfiguration.parse(url: "smtp://127.0.0.1:2525").security == .startTLSIfOffered)
        #expect(try SMTPConfiguration.parse(url: "smtp://localhost").security == .startTLSIfOffered)
        #expect(try SMTPConfiguration.parse(url: "smtp://[::1]:2525").security == .startTLSIfOffered)
        let lan = try SMTPConfiguration.parse(url: "smtp://relay.internal?starttls=opportunistic")
        #expect(lan.security == .startTLSIfOffered)
        #expect(lan.description == "smtp://relay.internal:25?starttls=opportunistic")
        #expect(try SMTPConfiguration.parse(url: lan.description).security == .startTLSIfOffered)
        #expect(plain.credentials == nil)
        #expect(plain.heloName == "localhost")
        #expect(plain.timeout == .seconds(30))

        let submission = try SMTPConfiguration.parse(
            url: "smtp://user%40example.com:p%40ss%3Aw%2Frd%20%E2%9C%93@mail.example.com:587/")
        #expect(submission.port == 587)
        #expect(submission.credentials == .init(username: "user@example.com", password: "p@ss:w/rd ✓"))

        let implicit = try SMTPConfiguration.parse(url: "SMTPS://u:p@[::1]")
        #expect(implicit.security == .implicitTLS)
        #expect(implicit.host == "::1")
        #expect(implicit.port == 465)

        let required = try SMTPConfiguration.parse(url: "smtp://relay.test:2525?starttls=required")
        #expect(required.security == .startTLSRequired)
        #expect(required.port == 2525)

        let colonInPassword = try SMTPConfiguration.parse(url: "smtp://u:a:b@h:25")
        #expect(colonInPassword.credentials?.password == "a:b")
    }

    @Test(arguments: [
        "http://mail.example.com", "mail.example.com", "smtp://", "smtp://:25", "smtp://host:0", "smtp://host:65536",
        "smtp://host:25x", "smtp://host:", "smtp://host/path", "smtp://host#frag", "smtp://host?tls=no",
        "smtps://host?starttls=required", "smtp://user@host", "smtp://:pw@host", "smtp://u:%zz@host",
        "smtp://u:%FF@host", "smtp://[::1", "smtp://[::1]x", "smtp://ho st",
    ])
    func rejectsEverythingElse(_ url: String) {
        let error = #expect(throws: SMTPError.self) { try SMTPConfiguration.parse(url: url) }
        #expect(error?.kind == .invalidConfiguration)
    }

    @Test func errorsNeverEchoThePassword() {
        for url in [
            "smtp://u:hunter2@host:bad", "smtp://u:hunter2%zz@host", "ftp://u:hunter2@host", "smtp://u:hunter2@host/x",
        ] {
            let error = #expect(throws: SMTPError.self) { try SMTPConfiguration.parse(url: url) }
            #expect(error.map { !"\($0)".contains("hunter2") } ?? false, "\(url)")
        }
    }

    @Test func descriptionsNeverShowThePassword() throws {
        let configuration = try SMTPConfiguration.parse(url: "smtps://mailer:hunter2@mail.example.com")
        #expect(configuration.description == "smtps://mailer:<redacted>@mail.example.com:465")
        #expect(!String(reflecting: configuration).contains("hunter2"))
        #expect(!"\(configuration)".contains("hunter2"))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        #expect(dumped.contains("mail.example.com"))
        var dumpedCredentials = ""
        dump(configuration.credentials, to: &dumpedCredentials)
        #expect(!dumpedCredentials.contains("hunter2"))
        #expect(!"\(configuration.credentials!)".contains("hunter2"))

        let ipv6 = SMTPConfiguration(host: "::1", port: 2525, security: .startTLSRequired)
        #expect(ipv6.description == "smtp://[::1]:2525?starttls=required")
    }

    @Test func permanenceFollowsReplyClass() {
        #expect(SMTPError(.rejected, replyCode: 550, detail: "").isPermanent)
        #expect(SMTPError(.rejected, replyCode: 554, detail: "").isPermanent)
        #expect(!SMTPError(.rejected, replyCode: 421, detail: "").isPermanent)
        #expect(!SMTPError(.rejected, replyCode: 451, detail: "").isPermanent)
        #expect(!SMTPError(.timeout, detail: "").isPermanent)
        #expect(!SMTPError(.connectionFailed, detail: "").isPermanent)
        #expect(!SMTPError(.tls, detail: "").isPermanent)
        #expect(SMTPError(.invalidMessage, detail: "").isPermanent)
        #expect(SMTPError(.messageTooLarge, detail: "").isPermanent)
    }
}
