import Foundation
import Gatehouse
import GatehouseAPI
import struct GatehouseCore.AdminActor
import struct GatehouseCore.UserAdmin
import struct GatehouseCore.UserDraft
import GatehouseServer
import GatehouseTesting
import Testing

/// The SDK's second factor against a live server, with codes from an independent TOTP implementation.
@Suite("SDK: second factors")
struct SecondFactorSDKTests {
    static let clientID = "sdk-mfa"
    static let password = "correct horse battery"

    @Test(
        "SDK-18: enrol an authenticator app and confirm it (recovery codes once); a password sign-in throws the typed second-factor challenge; a wrong code says what is left; a TOTP code or a recovery code answers it with the same SignInResult; factors listed and removed"
    )
    func secondFactor() async throws {
        guard await IndependentTOTP.isAvailable() else {
            print("skipped: pip install pyotp to run the SDK's TOTP test against an independent implementation")
            return
        }
        let server = try await TestServer.startLive()
        try await server.createClient(id: Self.clientID, settings: ["email_verification=off"])
        let clock = server.clock
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore()))
            _ = try await client.signUp(email: "sdk-mfa@example.com", password: Self.password)
            let enrolment = try await client.enrolTOTP()
            #expect(enrolment.otpauthUri.hasPrefix("otpauth://totp/"))
            let first = try #require(try await IndependentTOTP.code(enrolment.secret, at: clock.now()))
            let confirmed = try await client.confirmFactor(id: enrolment.id, code: first)
            #expect(confirmed.factor.confirmed && confirmed.recoveryCodes?.count == 10)
            let recovery = try #require(confirmed.recoveryCodes)
            #expect(try await client.factors().factors.map(\.id) == [enrolment.id])

            func challenge() async throws -> SecondFactorChallenge {
                do {
                    try await client.signIn(email: "sdk-mfa@example.com", password: Self.password)
                } catch let error as GatehouseError where error.isSecondFactorRequired {
                    return try #require(error.secondFactor)
                }
                Issue.record("the password alone signed in")
                throw GatehouseError(code: .invalidRequest, status: nil, message: "no challenge")
            }
            let waiting = try await challenge()
            #expect(waiting.factors == [.totp, .recoveryCode])
            do {
                try await client.signIn(secondFactor: .totp, code: "000000", challenge: waiting)
                Issue.record("a wrong code signed in")
            } catch let error as GatehouseError {
                #expect(error.isInvalidCode && error.remainingAttempts == 4, "\(error)")
            }
            clock.advance(by: 30)
            let code = try #require(try await IndependentTOTP.code(enrolment.secret, at: clock.now()))
            let signedIn = try await client.signIn(secondFactor: .totp, code: code, challenge: waiting)
            #expect(signedIn.user.email == "sdk-mfa@example.com" && !signedIn.isNew)
            #expect(client.session != nil)

            // A session that passed the factor may change factors.
            let fresh = try await client.regenerateRecoveryCodes()
            #expect(fresh.count == 10 && Set(fresh).isDisjoint(with: recovery))
            let again = try await challenge()
            // The old set stopped working; the new one works once.
            await #expect(throws: GatehouseError.self) {
                try await client.signIn(secondFactor: .recoveryCode, code: recovery[0], challenge: again)
            }
            try await client.signIn(secondFactor: .recoveryCode, code: fresh[0], challenge: again)
            try await client.removeFactor(id: enrolment.id)
            #expect(try await client.factors().recoveryCodesLeft == 0)
            // No factor left: the password alone signs in again.
            try await client.signIn(email: "sdk-mfa@example.com", password: Self.password)
        }
        await server.stop()
    }

    @Test(
        "SDK-19: on an mfa=required client the sign-up throws a challenge that requires enrolment: enrolTOTP(for:) gives the same app twice, its first code completes the sign-in with the recovery codes in the SignInResult; a later sign-in's challenge is answered with a code by mail sent by sendSecondFactorCode (a user with a proved address and no app)"
    )
    func enrolmentAndMailedCode() async throws {
        guard await IndependentTOTP.isAvailable() else {
            print("skipped: pip install pyotp to run the SDK's TOTP test against an independent implementation")
            return
        }
        let server = try await TestServer.startLive()
        try await server.createClient(id: "sdk-strict", settings: ["email_verification=off", "mfa=required"])
        let mailbox = "sdk-mailbox@example.com"
        _ = try await UserAdmin(services: server.services).create(
            UserDraft(email: mailbox, password: Self.password, emailVerified: true), actor: AdminActor(name: "test"))
        let clock = server.clock
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: "sdk-strict", store: InMemorySessionStore()))
            let delegate = Recorder()
            client.setDelegate(delegate)
            var challenge: SecondFactorChallenge?
            do {
                _ = try await client.signUp(email: "sdk-enrol@example.com", password: Self.password)
                Issue.record("the sign-up started a session without a factor")
            } catch let error as GatehouseError where error.isSecondFactorRequired {
                challenge = error.secondFactor
            }
            let waiting = try #require(challenge)
            #expect(waiting.requiresEnrolment && waiting.factors == [.totp], "\(waiting)")
            #expect(client.session == nil)
            // The delegate (and the event stream, which the same emit feeds) heard the challenge before it was thrown.
            #expect(delegate.events.contains(.secondFactorRequired(waiting)), "\(delegate.events)")
            let enrolment = try await client.enrolTOTP(for: waiting)
            #expect(try await client.enrolTOTP(for: waiting).secret == enrolment.secret)
            let code = try #require(try await IndependentTOTP.code(enrolment.secret, at: clock.now()))
            let signedIn = try await client.signIn(secondFactor: .totp, code: code, challenge: waiting)
            #expect(signedIn.isNew && signedIn.recoveryCodes?.count == 10 && client.session != nil)
            try await client.signOut()

            // A user with a proved address and no app: a code by mail answers the challenge.
            var mailChallenge: SecondFactorChallenge?
            do {
                try await client.signIn(email: mailbox, password: Self.password)
            } catch let error as GatehouseError where error.isSecondFactorRequired {
                mailChallenge = error.secondFactor
            }
            let byMail = try #require(mailChallenge)
            #expect(byMail.factors == [.emailCode, .totp] && byMail.requiresEnrolment)
            let sent = try await client.sendSecondFactorCode(.emailCode, challenge: byMail)
            #expect(sent.sentTo == "s***@example.com")
            try await server.deliverMail()
            let text = try #require(server.lastMail(to: mailbox, kind: "otp")?.text)
            let mailed = try #require(text.firstMatch(of: /\b\d{6}\b/).map { String($0.output) })
            let result = try await client.signIn(secondFactor: .emailCode, code: mailed, challenge: byMail)
            #expect(result.user.email == mailbox && result.recoveryCodes == nil)
        }
    }

    @Test(
        "SDK-20: on an mfa=required client with verification, the mail's link proves the address and comes back into the app as a challenge (handle(url:) throws it: enrolment required); enrolling and the first code sign in with the sign-up's PKCE verifier"
    )
    func verificationLinkChallenge() async throws {
        guard await IndependentTOTP.isAvailable() else {
            print("skipped: pip install pyotp to run the SDK's TOTP test against an independent implementation")
            return
        }
        let server = try await TestServer.startLive()
        try await server.createClient(id: "mobile-mfa", redirectURIs: ["com.example.app:/verified"], settings: ["mfa=required"])
        let clock = server.clock
        try await withLiveServer(server) { base in
            let redirect = URL(string: "com.example.app:/verified")!
            let client = AuthClient(
                configuration: .init(baseURL: base, clientID: "mobile-mfa", redirectURL: redirect, store: InMemorySessionStore()))
            guard case .verificationRequired = try await client.signUp(email: "linked@example.com", password: Self.password) else {
                Issue.record("expected verification to be required")
                return
            }
            try await server.deliverMail()
            let linkPath = try #require(server.lastMail(to: "linked@example.com", kind: "verification")?.linkPath("/verify?token="))
            let location = try await Redirects.confirm(URL(string: base.absoluteString + linkPath)!)
            var challenge: SecondFactorChallenge?
            do {
                _ = try await client.handle(url: try #require(URL(string: location)))
                Issue.record("the link signed in without a factor")
            } catch let error as GatehouseError where error.isSecondFactorRequired {
                challenge = error.secondFactor
            }
            let waiting = try #require(challenge, "\(location)")
            #expect(waiting.requiresEnrolment && waiting.factors.contains(.totp), "\(waiting)")
            let enrolment = try await client.enrolTOTP(for: waiting)
            let code = try #require(try await IndependentTOTP.code(enrolment.secret, at: clock.now()))
            let result = try await client.signIn(secondFactor: .totp, code: code, challenge: waiting)
            #expect(result.user.emailVerified && result.recoveryCodes?.count == 10)
        }
    }

    /// The delegate's events, in order.
    final class Recorder: AuthClientDelegate, @unchecked Sendable {
        // `@unchecked Sendable` is sound: `received` is only touched while `lock` is held.
        private let lock = NSLock()
        private var received: [AuthEvent] = []
        var events: [AuthEvent] { lock.withLock { received } }
        func authClient(_ client: AuthClient, didReceive event: AuthEvent) async { lock.withLock { received.append(event) } }
    }
}
