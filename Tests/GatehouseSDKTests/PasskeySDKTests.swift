import Foundation
import Gatehouse
import GatehouseAPI
import GatehouseServer
import GatehouseTesting
import Testing

/// The SDK's passkey calls against a live server, with the authenticator's side played by python-fido2
/// (`IndependentAuthenticator`): the ceremony as data, as any authenticator would answer it.
@Suite("SDK: passkeys")
struct PasskeySDKTests {
    static let password = "correct horse battery"

    /// The authenticator's registration response for `options`, at the server's own origin.
    static func create(
        _ options: PasskeyCreationOptions, origin: String
    ) async throws -> (RegistrationCredential, IndependentAuthenticator.Credential) {
        let made = try await IndependentAuthenticator.create([
            .create(rpID: options.publicKey.rp.id, origin: origin, challenge: options.publicKey.challenge)
        ])[0]
        let credential = RegistrationCredential(
            id: made.credentialID, rawId: made.credentialID,
            response: .init(
                clientDataJSON: made.response["clientDataJSON"]!, attestationObject: made.response["attestationObject"]!,
                transports: ["internal"]))
        return (credential, made)
    }

    static func get(
        _ options: PasskeyRequestOptions, origin: String, made: IndependentAuthenticator.Credential, userHandle: String?, signCount: UInt32
    ) async throws -> AuthenticationCredential {
        var spec = IndependentAuthenticator.Spec.get(
            rpID: options.publicKey.rpId, origin: origin, challenge: options.publicKey.challenge, credential: made, signCount: signCount)
        spec.userHandle = userHandle
        let assertion = try await IndependentAuthenticator.get([spec])[0].response
        return AuthenticationCredential(
            id: made.credentialID, rawId: made.credentialID,
            response: .init(
                clientDataJSON: assertion["clientDataJSON"]!!, authenticatorData: assertion["authenticatorData"]!!,
                signature: assertion["signature"]!!, userHandle: assertion["userHandle"] ?? nil))
    }

    @Test(
        "SDK-PASSKEY-1: a signed-in user registers a passkey from the options the SDK fetched (python-fido2 answering), lists and renames it; signed out, a usernameless sign-in with it gives the same user a session whose tokens say mfa; on an mfa=required client a password sign-in throws a challenge offering passkey, which the passkey answers; removing the passkey ends its sessions"
    )
    func passkeys() async throws {
        guard await IndependentAuthenticator.isAvailable() else {
            print("skipped: pip install fido2 cryptography to run the SDK's passkey test against an independent authenticator")
            return
        }
        let server = try await TestServer.startLive()
        try await server.createClient(id: "sdk-passkey", settings: ["email_verification=off", "methods=password,passkey"])
        try await server.createClient(
            id: "sdk-passkey-mfa", settings: ["email_verification=off", "methods=password,passkey", "mfa=required"])
        try await withLiveServer(server) { base in
            let origin = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
            let client = AuthClient(configuration: .init(baseURL: base, clientID: "sdk-passkey", store: InMemorySessionStore()))
            let signedUp = try await client.signUp(email: "sdk-passkey@example.com", password: Self.password)
            let options = try await client.passkeyRegistrationOptions()
            #expect(options.publicKey.authenticatorSelection.userVerification == "required")
            let (credential, made) = try await Self.create(options, origin: origin)
            let passkey = try await client.registerPasskey(credential, options: options, name: "Test key")
            #expect(passkey.name == "Test key" && passkey.transports == ["internal"])
            #expect(try await client.passkeys().map(\.id) == [passkey.id])
            #expect(try await client.renamePasskey(id: passkey.id, name: "Renamed").name == "Renamed")

            _ = try await client.signOut()
            let signInOptions = try await client.passkeySignInOptions()
            #expect(signInOptions.publicKey.allowCredentials.isEmpty)
            let assertion = try await Self.get(
                signInOptions, origin: origin, made: made, userHandle: options.publicKey.user.id, signCount: 1)
            let signedIn = try await client.signIn(passkey: assertion, options: signInOptions)
            #expect(signedIn.user.id == signedUp.user.id && !signedIn.isNew)
            let token = try #require(client.session?.accessToken)
            let payload = try #require(Data(base64Encoded: Self.padded(String(token.split(separator: ".")[1]))))
            let claims = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
            #expect((claims["amr"] as? [String] ?? []).contains("mfa"), "\(claims)")

            // The passkey as the second factor on a client that requires one.
            let strict = AuthClient(configuration: .init(baseURL: base, clientID: "sdk-passkey-mfa", store: InMemorySessionStore()))
            var waiting: SecondFactorChallenge?
            do {
                try await strict.signIn(email: "sdk-passkey@example.com", password: Self.password)
                Issue.record("the password alone signed in")
            } catch let error as GatehouseError where error.isSecondFactorRequired {
                waiting = error.secondFactor
            }
            let challenge = try #require(waiting)
            #expect(challenge.factors == [.passkey] && !challenge.requiresEnrolment)
            let factorOptions = try await strict.passkeyOptions(for: challenge)
            #expect(factorOptions.publicKey.allowCredentials.map(\.id) == [made.credentialID])
            let answer = try await Self.get(factorOptions, origin: origin, made: made, userHandle: nil, signCount: 2)
            let completed = try await strict.signIn(secondFactor: answer, challenge: challenge)
            #expect(completed.user.id == signedUp.user.id)

            // Removing it ends the session it started (the password's, on the other client, stays).
            try await strict.removePasskey(id: passkey.id)
            await #expect(throws: GatehouseError.self) { _ = try await client.refreshSession() }
            #expect(try await strict.passkeys().isEmpty)
        }
        await server.stop()
    }

    static func padded(_ text: String) -> String {
        let base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)
    }
}
