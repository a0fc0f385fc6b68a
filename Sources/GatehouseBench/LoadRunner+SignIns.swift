import Foundation
import NIOCore
import NIOHTTP1

/// The scenarios whose one timed step is two requests: the hosted single sign-on, a second factor,
/// a device and a passkey sign-in, and their set-up.
extension LoadRunner {
    /// Single sign-on and the code exchange; a refused authorization is the answer.
    func hostedSignIn(cookie: String) async throws -> BenchClient.Answer {
        let authorized = try await client.get(target.authorizePath(challenge: Self.benchPKCE.challenge), cookie: cookie)
        guard authorized.status == 303, let location = authorized.headers["location"].first,
            let code = URLComponents(string: location)?.queryItems?.first(where: { $0.name == "code" })?.value
        else { return authorized }
        return try await client.send(target.exchange(code: code, verifier: Self.benchPKCE.verifier))
    }

    /// One PKCE pair for the whole run: the exchange checks it like any other, and no two requests
    /// share a code.
    static let benchPKCE = (
        verifier: "bench-verifier-0123456789-abcdefghijklmnopqrstuvwxyz", challenge: "2jWB5HORkKgqnTwY916xUGwDhNNXcfic4GfY6Udgc-4"
    )

    /// The password, then the app's code for the waiting sign-in. A sign-in that asks nothing more means
    /// the pool was not imported: the run stops and says so.
    func totpSignIn(_ account: BenchTOTPUser) async throws -> BenchClient.Answer {
        let login = try await client.send(target.login(account.user))
        if login.status == 200 {
            throw BenchError.setup("login-totp: \(account.user.email) has no authenticator app: import the pool (--print-totp-users)")
        }
        guard login.status == 403, let flow = login.string("flow_id") else { return login }
        return try await client.send(target.secondFactor(flowID: flow, code: account.code()))
    }

    /// A challenge and its signed answer; a refused challenge is the answer.
    func deviceSignIn(_ device: BenchDevice) async throws -> BenchClient.Answer {
        let challenge = try await client.send(target.deviceChallenge(authenticatorID: device.authenticatorID))
        guard challenge.status == 200, let id = challenge.string("challenge_id"), let nonce = challenge.string("challenge") else {
            return challenge
        }
        let signature = try device.sign(challengeID: id, challenge: nonce, clientID: target.clientID)
        return try await client.send(target.deviceAuthenticate(challengeID: id, signature: signature))
    }

    /// Registers a passkey for the signed-in virtual user (set-up, not measured).
    func registerPasskey(access: String) async throws -> BenchPasskey {
        let options = try await client.send(target.passkeyRegistrationOptions(access: access))
        let publicKey = options.json?["public_key"] as? [String: Any]
        guard let flow = options.string("flow_id"), let challenge = publicKey?["challenge"] as? String,
            let handle = (publicKey?["user"] as? [String: Any])?["id"] as? String,
            let rpID = (publicKey?["rp"] as? [String: Any])?["id"] as? String
        else {
            throw BenchError.setup("passkey options answered \(options.status): \(String(buffer: options.body).prefix(200))")
        }
        var passkey = BenchPasskey()
        passkey.userHandle = handle
        passkey.rpID = rpID
        // The server accepts its public URL's origin, which is the address the bench was given.
        passkey.origin =
            URLComponents(string: client.baseURL).map { "\($0.scheme ?? "http")://\($0.host ?? "")" + ($0.port.map { ":\($0)" } ?? "") }
            ?? ""
        let registered = try await client.send(
            target.passkeyRegister(flowID: flow, credential: try passkey.registration(challenge: challenge), access: access))
        guard registered.status == 201 else {
            throw BenchError.setup("passkey registration answered \(registered.status): \(String(buffer: registered.body).prefix(200))")
        }
        return passkey
    }

    /// A challenge and the assertion over it; a refused challenge is the answer.
    func passkeySignIn(_ passkey: BenchPasskey) async throws -> BenchClient.Answer {
        let options = try await client.send(target.passkeyOptions())
        guard options.status == 200, let flow = options.string("flow_id"),
            let challenge = (options.json?["public_key"] as? [String: Any])?["challenge"] as? String
        else { return options }
        return try await client.send(target.passkeyAuthenticate(flowID: flow, credential: try passkey.assertion(challenge: challenge)))
    }
}
