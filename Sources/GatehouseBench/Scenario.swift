import Foundation

/// What a virtual user does in a loop. `mixed` floods logins open-loop (at `--login-rate`) while
/// refreshes run (closed-loop, or open-loop at `--rate`), and reports both. `device` is one device
/// sign-in: a challenge, then its signed answer (two requests, timed together). `social` is a sign-in
/// with a provider's ID token (a fresh one per request, for one of the seeded subjects);
/// `social-access` one with a GitHub access token, which the server proves with the provider's token
/// check and reads the profile of (three calls to the bench's provider per sign-in). `authorize` is the
/// hosted sign-in's single sign-on: a browser with a Gatehouse session asks `/oauth/authorize` with
/// `prompt=none`, then the client exchanges the code with its PKCE verifier (two requests, timed together).
/// `login-totp` is a password sign-in that answers `mfa_required`, completed with the account's current
/// authenticator-app code (two requests, timed together; each account once, ``BenchTOTPUser``).
/// `refresh-dpop` and `me-dpop` are `refresh` and `me` for a session bound to the virtual user's DPoP
/// key: each request carries a fresh proof (RFC 9449), which the server verifies and records once.
/// `device-poll` is a TV polling the device authorization grant (RFC 8628) before anyone approved: each
/// virtual user holds one device code and polls it; the answer is 400 `authorization_pending` or
/// `slow_down` (a closed loop polls faster than the interval), which is this scenario's success.
/// `token-exchange` is a service trading a signed-in user's access token for one meant for a
/// downstream audience (RFC 8693, the confidential client with `token_exchange=on`). `passkey` is a
/// usernameless passkey sign-in with a P-256 key registered at set-up: a challenge, then the signed
/// assertion (two requests, timed together). `anonymous` starts an anonymous account: a user row and a
/// session, no password hashed (the client has `anonymous=on`). `provider-token` is an app reading the
/// social provider's access token Gatehouse keeps for its user (`GET /v1/me/identities/{id}/token`,
/// provider `bench-kept` with `keep_tokens`): each virtual user signs in once through the provider's
/// web flow at set-up, then reads.
public enum Scenario: String, CaseIterable, Sendable, Codable {
    case login, refresh, introspect, jwks, me, signup, device, social, anonymous
    case loginTOTP = "login-totp"
    case socialAccess = "social-access"
    case clientCredentials = "client-credentials"
    case authorize
    case refreshDPoP = "refresh-dpop"
    case meDPoP = "me-dpop"
    case devicePoll = "device-poll"
    case tokenExchange = "token-exchange"
    case providerToken = "provider-token"
    case passkey
    case mixed
}

/// A refresh-token chain: each virtual user follows its own, so rotation is real and never collides.
public struct RefreshChain: Sendable {
    public private(set) var token: String
    public private(set) var rotations = 0

    public init(token: String) { self.token = token }

    /// Takes the successor from a token answer; `false` when the answer carries none (the chain broke).
    public mutating func advance(with successor: String?) -> Bool {
        guard let successor, !successor.isEmpty, successor != token else { return false }
        token = successor
        rotations += 1
        return true
    }
}

/// Seeded accounts the login scenario cycles through.
public struct SeedUser: Sendable, Hashable {
    public var email: String
    public var password: String

    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }

    public static func make(count: Int, runID: String) -> [SeedUser] {
        (0..<count).map { SeedUser(email: "bench-\(runID)-\($0)@example.com", password: "bench password \($0) \(runID)") }
    }
}
