import Foundation

/// `POST /v1/mfa/verify`: completes a sign-in that answered `mfa_required`, with one of the factors
/// its problem named.
public struct SecondFactorRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    /// The `flow_id` of the `mfa_required` problem.
    public var flowId: String
    /// `totp` (a code from an authenticator app), `recovery_code`, `email_otp`, `sms_otp` or `passkey`.
    public var factor: String
    /// The code; empty for `passkey`, which answers with `credential`.
    public var code: String
    /// `passkey`: the authenticator's answer to `POST /v1/mfa/passkey/options`'s challenge.
    public var credential: AuthenticationCredential?

    public init(clientId: String? = nil, flowId: String, factor: String, code: String, credential: AuthenticationCredential? = nil) {
        self.clientId = clientId
        self.flowId = flowId
        self.factor = factor
        self.code = code
        self.credential = credential
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        clientId = try c.decodeIfPresent(String.self, forKey: .clientId)
        flowId = try c.decode(String.self, forKey: .flowId)
        factor = try c.decode(String.self, forKey: .factor)
        credential = try c.decodeIfPresent(AuthenticationCredential.self, forKey: .credential)
        // A passkey answers with its credential and no code.
        code = try credential == nil ? c.decode(String.self, forKey: .code) : c.decodeIfPresent(String.self, forKey: .code) ?? ""
    }

    private enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
        case flowId = "flow_id"
        case factor, code, credential
    }
}

/// `POST /v1/mfa/passkey/options`: the challenge a passkey answers to complete a waiting sign-in.
public struct SecondFactorPasskeyRequest: Codable, Hashable, Sendable {
    public var flowId: String

    public init(flowId: String) { self.flowId = flowId }

    private enum CodingKeys: String, CodingKey {
        case flowId = "flow_id"
    }
}

/// What completing a second factor started when the waiting sign-in was a web flow's: the one-time
/// code to exchange at `/oauth/token` with the PKCE verifier, as the redirect would have carried it.
public struct SecondFactorCodeResponse: Codable, Hashable, Sendable {
    public var code: String
    /// The recovery codes of a factor enrolled during this sign-in (the user's first), shown once.
    public var recoveryCodes: [String]?

    public init(code: String, recoveryCodes: [String]? = nil) {
        self.code = code
        self.recoveryCodes = recoveryCodes
    }

    private enum CodingKeys: String, CodingKey {
        case code
        case recoveryCodes = "recovery_codes"
    }
}

/// `POST /v1/mfa/send`: a code by mail (`email_otp`) or text (`sms_otp`) to the user's proved address,
/// for a waiting sign-in whose `mfa_required` answer offered that factor.
public struct SecondFactorSendRequest: Codable, Hashable, Sendable {
    public var flowId: String
    public var factor: String

    public init(flowId: String, factor: String) {
        self.flowId = flowId
        self.factor = factor
    }

    private enum CodingKeys: String, CodingKey {
        case flowId = "flow_id"
        case factor
    }
}

/// `POST /v1/mfa/enrol`: an authenticator app for a sign-in whose `mfa_required` answer said `enrol`
/// (the client or the request requires a factor the user does not have yet).
public struct SecondFactorEnrolRequest: Codable, Hashable, Sendable {
    public var flowId: String

    public init(flowId: String) { self.flowId = flowId }

    private enum CodingKeys: String, CodingKey {
        case flowId = "flow_id"
    }
}

/// `POST /v1/me/factors/totp`: a new authenticator app, not counted until a first code confirms it.
public struct TOTPEnrolment: Codable, Hashable, Sendable {
    /// The factor's id, for confirming and removing it.
    public var id: String
    /// The shared secret in base32, for typing into the app by hand.
    public var secret: String
    /// The `otpauth://totp/…` URI an app shows as a QR code.
    public var otpauthUri: String

    public init(id: String, secret: String, otpauthUri: String) {
        self.id = id
        self.secret = secret
        self.otpauthUri = otpauthUri
    }

    private enum CodingKeys: String, CodingKey {
        case id, secret
        case otpauthUri = "otpauth_uri"
    }
}

/// `POST /v1/me/factors/{id}/confirm`: the first code from the authenticator app.
public struct FactorConfirmRequest: Codable, Hashable, Sendable {
    public var code: String

    public init(code: String) { self.code = code }
}

/// Recovery codes, shown once: at the first confirmed factor, and when regenerated.
public struct RecoveryCodes: Codable, Hashable, Sendable {
    public var codes: [String]

    public init(codes: [String]) { self.codes = codes }
}

/// The answer to confirming a factor: the recovery codes when this was the user's first factor.
public struct FactorConfirmed: Codable, Hashable, Sendable {
    public var factor: FactorInfo
    public var recoveryCodes: [String]?

    public init(factor: FactorInfo, recoveryCodes: [String]?) {
        self.factor = factor
        self.recoveryCodes = recoveryCodes
    }

    private enum CodingKeys: String, CodingKey {
        case factor
        case recoveryCodes = "recovery_codes"
    }
}

/// A second factor of the user's, as `GET /v1/me/factors` lists it: never its secret.
public struct FactorInfo: Codable, Hashable, Sendable {
    public var id: String
    /// `totp` or `passkey`.
    public var type: String
    /// Whether a first code confirmed it (an unconfirmed one asks nothing at sign-in); a passkey is.
    public var confirmed: Bool
    public var createdAt: Date
    /// A passkey's name.
    public var name: String?

    public init(id: String, type: String, confirmed: Bool, createdAt: Date, name: String? = nil) {
        self.id = id
        self.type = type
        self.confirmed = confirmed
        self.createdAt = createdAt
        self.name = name
    }

    private enum CodingKeys: String, CodingKey {
        case id, type, confirmed, name
        case createdAt = "created_at"
    }
}

/// `GET /v1/me/factors`.
public struct FactorList: Codable, Hashable, Sendable {
    public var factors: [FactorInfo]
    /// Recovery codes not used yet.
    public var recoveryCodesLeft: Int

    public init(factors: [FactorInfo], recoveryCodesLeft: Int) {
        self.factors = factors
        self.recoveryCodesLeft = recoveryCodesLeft
    }

    private enum CodingKeys: String, CodingKey {
        case factors
        case recoveryCodesLeft = "recovery_codes_left"
    }
}
