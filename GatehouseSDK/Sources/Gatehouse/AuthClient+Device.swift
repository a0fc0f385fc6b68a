import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A sign-in started on a device without a browser or keyboard (a TV, a watch, a command line),
/// finished by a person on another screen (RFC 8628). Show ``userCode`` and ``verificationURI`` (or a
/// QR code of ``verificationURIComplete``), then wait with ``AuthClient/signIn(deviceAuthorization:persist:)``.
public struct DeviceAuthorization: Sendable, Hashable {
    /// What the person types on ``verificationURI``, such as `BCDF-GHJK`.
    public let userCode: String
    /// The page where the person types the code and signs in (the server's `/device`).
    public let verificationURI: URL
    /// ``verificationURI`` with the code filled in, for a QR code.
    public let verificationURIComplete: URL?
    /// After this the code no longer works: start again.
    public let expiresAt: Date
    /// How long to wait between two polls, as the server asks.
    public let interval: TimeInterval
    let deviceCode: String
}

extension AuthClient {
    /// Starts a device sign-in: the codes to show while ``signIn(deviceAuthorization:persist:)`` waits for the person.
    ///
    /// - Parameter scopes: what to ask for; empty asks for the client's defaults.
    public func startDeviceAuthorization(scopes: Set<Scope> = []) async throws -> DeviceAuthorization {
        var fields = [("client_id", configuration.clientID)]
        if let scope = scopes.wireValue { fields.append(("scope", scope)) }
        let answer: DeviceAuthorizationResponse = try await http.send(
            http.form(http.request("POST", "/oauth/device_authorization"), fields))
        guard let page = URL(string: answer.verificationURI) else {
            throw GatehouseError(code: GatehouseError.invalidResponse, status: 200, message: "The verification URI is not a URL.")
        }
        return DeviceAuthorization(
            userCode: answer.userCode, verificationURI: page,
            verificationURIComplete: answer.verificationURIComplete.flatMap(URL.init(string:)),
            expiresAt: configuration.clock.now.addingTimeInterval(TimeInterval(answer.expiresIn)),
            interval: TimeInterval(max(1, answer.interval ?? 5)), deviceCode: answer.deviceCode)
    }

    /// Waits until the person approves on the other screen, polling as the server asks (slower after
    /// a `slow_down`), then signs in like every other sign-in (the same ``SignInResult``; with DPoP the
    /// session is bound to this device's key). Throws the server's `access_denied` when the person
    /// declines and `expired_token` when the code ran out; cancelling the task stops the polling.
    @discardableResult
    public func signIn(deviceAuthorization authorization: DeviceAuthorization, persist: Bool = true) async throws -> SignInResult {
        var interval = authorization.interval
        let fields = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", authorization.deviceCode),
            ("client_id", configuration.clientID),
        ]
        while true {
            do {
                let tokens: TokenResponse = try await http.send(http.form(http.request("POST", "/oauth/token"), fields))
                return try await adopt(tokens, persist: persist)
            } catch let error as GatehouseError where error.code == .authorizationPending || error.code == .slowDown {
                if error.code == .slowDown { interval += 5 }
            }
            try await Task.sleep(nanoseconds: UInt64(interval * 1_000_000_000))
        }
    }
}
