import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// The device authorization grant (RFC 8628): the device polls while a person types its code on
/// `/device`, signs in on the hosted pages and approves on a consent page naming the client.
@Suite("Device authorization grant")
struct DeviceGrantTests {
    static let grant = "urn:ietf:params:oauth:grant-type:device_code"

    static func poll(_ client: some TestClientProtocol, _ deviceCode: String, clientID: String = "tv") async throws -> TestResponse {
        try await client.form("/oauth/token", ["grant_type": Self.grant, "device_code": deviceCode, "client_id": clientID])
    }

    @Test(
        "DG-1: a device asks for codes; polling answers authorization_pending, slow_down when too fast (the interval grows by five), a browser types the code on /device, signs in and approves on a consent page naming the client; the next poll gets tokens once; a denied code ends with access_denied, an unknown one on the page is refused, an expired one ends with expired_token",
        arguments: TestDatabase.available)
    func deviceGrant(_ database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.createClient(id: "tv", settings: ["email_verification=off"])
        try await server.withRouter { client in
            let user = try await signUp(client)
            let started = try await client.form("/oauth/device_authorization", ["client_id": "tv", "scope": "openid profile"])
            #expect(started.status == .ok, "\(started.text)")
            let deviceCode = try #require(started.string("device_code"))
            let userCode = try #require(started.string("user_code"))
            #expect(userCode.range(of: "^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$", options: .regularExpression) != nil)
            #expect(started.string("verification_uri") == "http://127.0.0.1:8080/device")
            #expect(started.string("verification_uri_complete") == "http://127.0.0.1:8080/device?user_code=\(userCode)")
            #expect(started.object["interval"] as? Int == 5)
            #expect(started.object["expires_in"] as? Int == 600)

            #expect(try await Self.poll(client, deviceCode).string("error") == "authorization_pending")
            // At once again: too fast.
            #expect(try await Self.poll(client, deviceCode).string("error") == "slow_down")
            server.clock.advance(by: 6)
            // Now the interval is ten seconds: six is still too fast.
            #expect(try await Self.poll(client, deviceCode).string("error") == "slow_down")
            server.clock.advance(by: 16)
            #expect(try await Self.poll(client, deviceCode).string("error") == "authorization_pending")

            // The person, in a browser: a wrong code first, then the right one typed in lower case.
            let jar = HostedJar(client)
            let page = try await jar.open("/device?user_code=\(userCode)")
            #expect(page.status == .ok)
            #expect(page.text.contains("value=\"\(userCode)\""))
            let wrong = try await jar.submit("/device", [("user_code", "BBBB-BBBB")], csrf: HostedJar.csrf(page))
            #expect(wrong.status == .badRequest)
            #expect(wrong.text.contains("id=\"error\""))
            let signInPage = try await jar.submit("/device", [("user_code", userCode.lowercased())], csrf: HostedJar.csrf(wrong))
            let action = try #require(HostedJar.action(signInPage, form: "signin"), "\(signInPage.text)")
            let consent = try await jar.submit(
                action, [("email", user.email), ("password", user.password)], csrf: HostedJar.csrf(signInPage))
            #expect(consent.text.contains("tv wants to access your account"), "\(consent.text)")
            let consentAction = try #require(HostedJar.action(consent, form: "consent"))
            let done = try await jar.submit(consentAction, [("decision", "allow")], csrf: HostedJar.csrf(consent))
            #expect(done.status == .ok)
            #expect(done.text.contains("Device connected"), "\(done.text)")

            server.clock.advance(by: 11)
            let tokens = try await Self.poll(client, deviceCode)
            #expect(tokens.status == .ok, "\(tokens.text)")
            let access = try #require(tokens.string("access_token"))
            #expect(tokens.string("refresh_token") != nil)
            #expect(tokens.string("id_token") != nil)
            #expect((try decodeClaims(access))["client_id"] as? String == "tv")
            // The person's session on the TV's client (the scopes asked for, without email).
            let me = try await client.json(.get, "/v1/me", bearer: access)
            #expect(me.status == .ok, "\(me.text)")
            #expect(me.string("id") == (try decodeClaims(user.accessToken)["sub"] as? String), "\(me.text)")
            // Once.
            #expect(try await Self.poll(client, deviceCode).string("error") == "invalid_grant")
            // Another client cannot poll a device code.
            let other = try await client.form("/oauth/device_authorization", ["client_id": "tv"])
            #expect(
                try await Self.poll(client, try #require(other.string("device_code")), clientID: TestServer.openClient).string("error")
                    == "invalid_grant")

            // Declined: the device hears access_denied.
            let declined = try await client.form("/oauth/device_authorization", ["client_id": "tv"])
            let declinedCode = try #require(declined.string("user_code"))
            let entry = try await jar.open("/device")
            let signedIn = try await jar.submit("/device", [("user_code", declinedCode)], csrf: HostedJar.csrf(entry))
            let ask = try #require(
                HostedJar.action(signedIn, form: "consent"), "the signed-in browser goes straight to consent: \(signedIn.text)")
            let refused = try await jar.submit(ask, [("decision", "deny")], csrf: HostedJar.csrf(signedIn))
            #expect(refused.text.contains("Device not connected"), "\(refused.text)")
            server.clock.advance(by: 6)
            #expect(try await Self.poll(client, try #require(declined.string("device_code"))).string("error") == "access_denied")

            // Expired: ten minutes without an approval.
            let late = try await client.form("/oauth/device_authorization", ["client_id": "tv"])
            server.clock.advance(by: 601)
            #expect(try await Self.poll(client, try #require(late.string("device_code"))).string("error") == "expired_token")
            let tooLate = try await jar.open("/device")
            #expect(
                try await jar.submit("/device", [("user_code", try #require(late.string("user_code")))], csrf: HostedJar.csrf(tooLate))
                    .status
                    == .badRequest)
        }
    }
}
