import Foundation
import GatehouseAPI

/// A factor that can complete a sign-in waiting for its second step.
public struct SecondFactorKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    init(_ rawValue: String) { self.rawValue = rawValue }

    /// The 6-digit code of an authenticator app.
    public static let totp = SecondFactorKind("totp")
    /// One of the recovery codes shown when the app was enrolled; each works once.
    public static let recoveryCode = SecondFactorKind("recovery_code")
    /// A code sent to the user's proved email address: ask for it with
    /// ``AuthClient/sendSecondFactorCode(_:challenge:)``. Offered where a second factor is required
    /// of a user without an authenticator app, and never when the first factor was a code by mail.
    public static let emailCode = SecondFactorKind("email_otp")
    /// A code sent to the user's proved phone number by text message, as ``emailCode``.
    public static let smsCode = SecondFactorKind("sms_otp")

    public var description: String { rawValue }
}

/// A sign-in whose first factor was right and which waits for a second before any session starts:
/// what a sign-in call throws as ``GatehouseError/secondFactor`` (`mfa_required`), for the app to
/// answer with ``AuthClient/signIn(secondFactor:code:challenge:persist:)``. It lasts 10 minutes and
/// takes 5 answers.
public struct SecondFactorChallenge: Sendable, Hashable {
    /// The server's id of the waiting sign-in.
    public let flowID: String
    /// The factors that may answer it (empty when the server did not say: a web sign-in's redirect).
    public let factors: [SecondFactorKind]
    /// The user has no second factor yet and the app requires one: enrol an authenticator app with
    /// ``AuthClient/enrolTOTP(for:)``, then answer with its first code as ``SecondFactorKind/totp``. The
    /// result carries the new recovery codes (``SignInResult/recoveryCodes``).
    public let requiresEnrolment: Bool

    /// The waiting sign-in came from the sign-up's verification link: its code is exchanged with the
    /// sign-up's PKCE verifier rather than the web sign-in's.
    let fromVerificationLink: Bool

    public init(flowID: String, factors: [SecondFactorKind], requiresEnrolment: Bool = false) {
        self.init(flowID: flowID, factors: factors, requiresEnrolment: requiresEnrolment, fromVerificationLink: false)
    }

    init(flowID: String, factors: [SecondFactorKind], requiresEnrolment: Bool, fromVerificationLink: Bool) {
        self.flowID = flowID
        self.factors = factors
        self.requiresEnrolment = requiresEnrolment
        self.fromVerificationLink = fromVerificationLink
    }
}

extension AuthClient {
    /// Completes a sign-in that threw `mfa_required` with the answer to one of its factors, and
    /// answers the same ``SignInResult`` as every sign-in. A wrong code throws `invalid_code` with
    /// ``GatehouseError/remainingAttempts``; the challenge ends after 5 wrong answers (`flow_expired`:
    /// sign in again), and an account is refused for a while after 10 (`rate_limited`, with
    /// ``GatehouseError/retryAfter``).
    ///
    /// ```swift
    /// do {
    ///     try await client.signIn(email: email, password: password)
    /// } catch let error as GatehouseError where error.isSecondFactorRequired {
    ///     let challenge = error.secondFactor!
    ///     let code = await askForCode()  // from the authenticator app
    ///     try await client.signIn(secondFactor: .totp, code: code, challenge: challenge)
    /// }
    /// ```
    @discardableResult
    public func signIn(
        secondFactor factor: SecondFactorKind, code: String, challenge: SecondFactorChallenge, persist: Bool = true
    ) async throws -> SignInResult {
        let body = SecondFactorRequest(clientId: configuration.clientID, flowId: challenge.flowID, factor: factor.rawValue, code: code)
        let (data, response) = try await http.perform(try http.json(http.request("POST", "/v1/mfa/verify"), body: body))
        let decoder = WireCoding.decoder()
        if let tokens = try? decoder.decode(TokenResponse.self, from: data) {
            return try await adopt(tokens, persist: persist)
        }
        // A web sign-in's: the code its redirect would have carried, bound to the kept PKCE verifier.
        if let web = try? decoder.decode(SecondFactorCodeResponse.self, from: data) {
            var result = try await exchangeForTokens(code: web.code, persist: persist, social: !challenge.fromVerificationLink)
            result.recoveryCodes = web.recoveryCodes
            return result
        }
        throw GatehouseError(code: GatehouseError.invalidResponse, status: response.statusCode, message: "Unreadable answer.")
    }

    /// For a challenge that ``SecondFactorChallenge/requiresEnrolment``: an authenticator app for the
    /// user (its base32 secret and `otpauth://` URI, for the app to show as a QR code). Asked again, it
    /// answers the same app until its first code, sent with
    /// ``signIn(secondFactor:code:challenge:persist:)``, confirms it and completes the sign-in.
    public func enrolTOTP(for challenge: SecondFactorChallenge) async throws -> TOTPEnrolment {
        let body = SecondFactorEnrolRequest(flowId: challenge.flowID)
        let (data, _) = try await http.perform(try http.json(http.request("POST", "/v1/mfa/enrol"), body: body))
        return try WireCoding.decoder().decode(TOTPEnrolment.self, from: data)
    }

    /// Sends the code of ``SecondFactorKind/emailCode`` or ``SecondFactorKind/smsCode`` for a challenge
    /// that lists it, to the user's proved address (``OTPSentResponse/sentTo`` shows it masked). Then
    /// answer the challenge with the code. Sends are spaced (`rate_limited` with
    /// ``GatehouseError/retryAfter`` when too soon).
    @discardableResult
    public func sendSecondFactorCode(_ factor: SecondFactorKind, challenge: SecondFactorChallenge) async throws -> OTPSentResponse {
        let body = SecondFactorSendRequest(flowId: challenge.flowID, factor: factor.rawValue)
        let (data, _) = try await http.perform(try http.json(http.request("POST", "/v1/mfa/send"), body: body))
        return try WireCoding.decoder().decode(OTPSentResponse.self, from: data)
    }

    /// The signed-in user's second factors (never a secret) and how many recovery codes are left.
    public func factors() async throws -> FactorList {
        try await authorized(http.request("GET", "/v1/me/factors"))
    }

    /// Starts adding an authenticator app: the secret (base32, for typing) and the `otpauth://` URI an
    /// app shows as a QR code. It counts once ``confirmFactor(id:code:)`` has its first code. Needs a
    /// recent sign-in, and one that passed the second factor when the user has one
    /// (`reauthentication_required` otherwise).
    public func enrolTOTP() async throws -> TOTPEnrolment {
        try await authorized(http.request("POST", "/v1/me/factors/totp"))
    }

    /// Confirms an authenticator app with its first code. The user's first factor answers its recovery
    /// codes here, once: show them and ask the user to keep them.
    public func confirmFactor(id: String, code: String) async throws -> FactorConfirmed {
        try await authorized(
            try http.json(
                http.request("POST", "/v1/me/factors/" + Self.pathSegment(id) + "/confirm"), body: FactorConfirmRequest(code: code)))
    }

    /// Removes an authenticator app (with the last one go the recovery codes).
    public func removeFactor(id: String) async throws {
        try await authorized(http.request("DELETE", "/v1/me/factors/" + Self.pathSegment(id)))
    }

    /// A new set of recovery codes, shown once; the old set stops working.
    public func regenerateRecoveryCodes() async throws -> [String] {
        let codes: RecoveryCodes = try await authorized(http.request("POST", "/v1/me/factors/recovery-codes"))
        return codes.codes
    }
}
