import Foundation
import Gatehouse
import GatehouseCore
import GatehouseTesting
import Testing

private typealias SDKError = Gatehouse.GatehouseError

/// The account calls no other SDK test makes, each against a live server over a socket.
@Suite("SDK account calls against a live server")
struct AccountCallsTests {
    static let clientID = "account-app"

    @Test(
        "Verification by code after a refused early resend, identifier status, terms, required fields, client info, another device's session revoked, recovery by code, global logout"
    )
    func accountCalls() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(
            id: Self.clientID,
            settings: [
                "terms_platform_version=1", "terms_client_version=a", "required_fields=given_name", "identifier_status=on",
                "enumeration_protection=off",
            ])
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore()))
            let email = "acct@example.com"
            guard
                case .verificationRequired(let pending) = try await client.signUp(
                    email: email, password: "correct horse battery", acceptTerms: true)
            else {
                Issue.record("expected verificationRequired")
                return
            }
            #expect(!pending.emailVerified && client.currentUser == nil)

            // The sign-up's own mail started the cool-down.
            let early = try await #require(throws: SDKError.self) { try await client.resendVerification(to: email) }
            #expect(early.isRateLimited && (early.retryAfter ?? 0) > 0)
            try await server.deliverMail()
            let code = try #require(server.lastMail(to: email, kind: "verification")?.code)
            let verified = try await client.signIn(email: email, verificationCode: code).user
            #expect(verified.emailVerified && client.currentUser?.id == pending.id)

            let status = try await client.identifierStatus(.email(email))
            #expect(status.exists && status.verified && status.hasPassword)

            let terms = try await client.terms()
            #expect(terms.platform?.version == "1" && terms.client?.version == "a")
            #expect(try await client.agreements().upToDate == true)
            _ = try await ClientAdmin(persistence: server.persistence, clock: server.clock, cache: server.services.clientCache)
                .update(id: Self.clientID, settings: ["terms_client_version=b"])
            #expect(try await client.agreements().upToDate == false)
            try await client.acceptTerms(try await client.terms())
            #expect(try await client.agreements().upToDate == true)

            #expect(try await client.requiredFields() == ["given_name"])
            #expect(try await client.missingRequiredFields() == ["given_name"])
            try await client.updateProfile(Profile(givenName: "Ada"))
            #expect(try await client.missingRequiredFields().isEmpty)
            #expect(try await client.refreshUser().profile.givenName == "Ada")
            let info = try await client.clientInfo()
            #expect(info.clientId == Self.clientID && info.requiredFields == ["given_name"])

            // Another device signs in; this one revokes it.
            let other = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore()))
            try await other.signIn(email: email, password: "correct horse battery")
            let sessions = try await client.sessions()
            #expect(sessions.count == 2)
            let otherSession = try #require(sessions.first { !$0.current })
            try await client.revokeSession(otherSession.id)
            let revoked = try await #require(throws: SDKError.self) { try await other.refreshSession() }
            #expect(revoked.isSessionEnded && other.state == .signedOut)

            // Recovery by code, then a new password without the old one.
            try await client.requestPasswordReset(email: email)
            try await server.deliverMail()
            let resetCode = try #require(server.lastMail(to: email, kind: "recovery")?.code)
            try await client.signIn(email: email, recoveryCode: resetCode)
            try await client.changePassword(to: "a brand new passphrase")
            try await other.signIn(email: email, password: "a brand new passphrase")

            // Global logout ends the other device's new session as well.
            #expect(try await client.signOut(scope: .global).isRevoked)
            #expect(client.state == .signedOut)
            let afterGlobal = try await #require(throws: SDKError.self) { try await other.refreshSession() }
            #expect(afterGlobal.isSessionEnded)
        }
    }
}
