import Foundation
import Gatehouse
import GatehouseAPI
import GatehouseServer
import GatehouseTesting
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK as a TV: it shows a code, a person approves on the hosted pages (played here over plain
/// HTTP, one request at a time with the browser's cookies), and the SDK's wait ends signed in.
@Suite("SDK: device authorization")
struct DeviceSDKTests {
    @Test(
        "SDK-DEVICE-1: startDeviceAuthorization shows a code and the page; signIn(deviceAuthorization:) polls until a person approves on /device (sign-in, consent) and answers the same SignInResult as every sign-in, DPoP-bound; a declined code throws access_denied"
    )
    func deviceSignIn() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: "tv-app", settings: ["email_verification=off"])
        server.clock.followRealTime()
        try await withLiveServer(server) { base in
            let password = "correct horse battery"
            let owner = AuthClient(configuration: .init(baseURL: base, clientID: "tv-app", store: InMemorySessionStore()))
            _ = try await owner.signUp(email: "tv@example.com", password: password)

            let store = InMemorySessionStore()
            let tv = AuthClient(configuration: .init(baseURL: base, clientID: "tv-app", store: store))
            let authorization = try await tv.startDeviceAuthorization(scopes: [.openid])
            #expect(authorization.verificationURI.absoluteString == base.absoluteString + "/device")
            #expect(authorization.userCode.count == 9)
            let waiting = Task { try await tv.signIn(deviceAuthorization: authorization) }

            var person = Person()
            let consent = try await person.signInOnDevicePage(
                authorization.verificationURIComplete!, email: "tv@example.com", password: password)
            let done = try await person.decide(consent, base: base, allow: true)
            #expect(done.contains("Device connected"))
            let result = try await waiting.value
            #expect(result.user.email == "tv@example.com" && !result.isNew)
            #expect(try await store.load()?.tokenType == "DPoP")
            #expect(try await tv.authorizedData(for: meRequest(base)).1.statusCode == 200)

            // Declined: the wait ends with the server's access_denied.
            let second = try await tv.startDeviceAuthorization()
            let declining = Task { try await tv.signIn(deviceAuthorization: second) }
            let page = try await person.get(second.verificationURIComplete!)
            let asked = try await person.post(
                base.appendingPathComponent("device"), ["user_code": second.userCode, "csrf": Person.csrf(page.text)])
            let consentPage = try await person.follow(asked, base: base)
            let declined = try await person.decide(consentPage, base: base, allow: false)
            #expect(declined.contains("Device not connected"))
            do {
                _ = try await declining.value
                Issue.record("a declined device signed in")
            } catch let error as Gatehouse.GatehouseError {
                #expect(error.code == .accessDenied, "\(error)")
            }
        }
    }
}

/// A browser without JavaScript: requests one at a time, cookies kept, redirects followed by hand.
struct Person {
    var cookies: [String: String] = [:]

    mutating func get(_ url: URL) async throws -> NoRedirectHTTP.Answer {
        let answer = try await NoRedirectHTTP.send("GET", url, headers: header)
        keep(answer)
        return answer
    }

    mutating func post(_ url: URL, _ fields: [String: String]) async throws -> NoRedirectHTTP.Answer {
        var headers = header
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        let body = fields.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $1)" }.joined(separator: "&")
        let answer = try await NoRedirectHTTP.send("POST", url, body: Data(body.utf8), headers: headers)
        keep(answer)
        return answer
    }

    /// Follows same-server redirects to a page.
    mutating func follow(_ answer: NoRedirectHTTP.Answer, base: URL) async throws -> NoRedirectHTTP.Answer {
        var answer = answer
        while answer.status == 303 || answer.status == 302, let location = answer.headers["location"] {
            answer = try await get(URL(string: location, relativeTo: base)!.absoluteURL)
        }
        return answer
    }

    /// The device page (prefilled), its form, the sign-in page: answers the consent page.
    mutating func signInOnDevicePage(_ url: URL, email: String, password: String) async throws -> NoRedirectHTTP.Answer {
        let base = URL(string: "/", relativeTo: url)!.absoluteURL
        let page = try await get(url)
        let code = try #require(
            Self.attribute(page.text, after: "id=\"user_code\" class=\"code\" name=\"user_code\" type=\"text\" value=\""))
        let signIn = try await follow(
            try await post(base.appendingPathComponent("device"), ["user_code": code, "csrf": Self.csrf(page.text)]), base: base)
        let action = try #require(Self.attribute(signIn.text, after: "<form id=\"signin\" method=\"post\" action=\""), "\(signIn.text)")
        return try await follow(
            try await post(
                URL(string: action, relativeTo: base)!.absoluteURL, ["email": email, "password": password, "csrf": Self.csrf(signIn.text)]),
            base: base)
    }

    mutating func decide(_ consent: NoRedirectHTTP.Answer, base: URL, allow: Bool) async throws -> String {
        let action = try #require(Self.attribute(consent.text, after: "<form id=\"consent\" method=\"post\" action=\""), "\(consent.text)")
        let answer = try await post(
            URL(string: action, relativeTo: base)!.absoluteURL, ["decision": allow ? "allow" : "deny", "csrf": Self.csrf(consent.text)])
        return try await follow(answer, base: base).text
    }

    static func csrf(_ html: String) -> String { attribute(html, after: "name=\"csrf\" value=\"") ?? "" }

    static func attribute(_ html: String, after marker: String) -> String? {
        guard let start = html.range(of: marker) else { return nil }
        return String(html[start.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&#x2F;", with: "/")
            .replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&#x3D;", with: "=")
    }

    private var header: [String: String] {
        cookies.isEmpty ? [:] : ["Cookie": cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
    }

    private mutating func keep(_ answer: NoRedirectHTTP.Answer) {
        guard let pair = answer.cookie else { return }
        let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
        if parts.count == 2 { cookies[parts[0]] = parts[1] }
    }
}
