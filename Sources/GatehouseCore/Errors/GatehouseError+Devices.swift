import GatehouseAPI

// MARK: - Device authenticators

extension GatehouseError {
    /// A wrong signature over a device challenge (a wrong PIN), with the counts after it.
    public static func authenticatorRejected(_ counts: FailureCounts) -> GatehouseError {
        var error = GatehouseError(
            .unauthenticated, code: .invalidAuthenticatorResponse, title: "Authentication failed",
            detail: "The authenticator's answer is wrong.")
        error.failureCounts = counts
        return error
    }

    /// The authenticator is gone: removed after its last allowed failure, deleted, or never known.
    public static func deviceDeregistered(_ counts: FailureCounts? = nil) -> GatehouseError {
        var error = GatehouseError(
            .unauthenticated, code: .deviceDeregistered, title: "Device deregistered",
            detail: "This authenticator is not registered. Sign in and register the device again.")
        error.failureCounts = counts
        return error
    }

    /// A device challenge that was used, expired or never issued.
    public static let challengeExpired = GatehouseError(
        .unauthenticated, code: .challengeExpired, title: "Challenge expired",
        detail: "This challenge was used or has expired. Ask for a new one.")

    public static let authenticatorExists = GatehouseError(
        .conflict, code: .authenticatorExists, title: "Already registered",
        detail: "This key is already registered on this device.")
}

// MARK: - Passkeys

extension GatehouseError {
    /// A passkey response that failed a check of its own, whatever credential it names: the detail is
    /// the check (no secret is in it).
    public static func invalidPasskey(_ reason: WebAuthnError) -> GatehouseError {
        GatehouseError(
            .badRequest, code: .invalidPasskey, title: "Passkey refused", detail: "The passkey's response was refused: \(reason).")
    }

    public static let passkeyExists = GatehouseError(
        .conflict, code: .authenticatorExists, title: "Already registered", detail: "This passkey is already registered.")
}
