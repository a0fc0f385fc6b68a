import Foundation
import Gatehouse
import GatehouseAPI
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
        let server = try await TestServer.start(.sqlite)
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
}
