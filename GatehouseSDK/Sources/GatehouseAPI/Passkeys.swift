import Foundation

// Passkeys (WebAuthn). The `public_key` options and the `credential` responses keep WebAuthn's own JSON
// shapes and camelCase member names (`PublicKeyCredentialCreationOptionsJSON`, `RegistrationResponseJSON`,
// …), so a browser's `PublicKeyCredential.parseCreationOptionsFromJSON` and `credential.toJSON()` pass
// through unchanged; Gatehouse's own members around them are snake_case like the rest of the API.

/// `POST /v1/passkeys/registration/options` (signed in) and `POST /v1/passkeys/authentication/options`:
/// a single-use challenge, kept by the server in a flow, and the options to hand the authenticator.
public struct PasskeyCreationOptions: Codable, Hashable, Sendable {
    public var flowId: String
    public var expiresIn: Int
    public var publicKey: PublicKeyCredentialCreationOptions

    public init(flowId: String, expiresIn: Int, publicKey: PublicKeyCredentialCreationOptions) {
        self.flowId = flowId
        self.expiresIn = expiresIn
        self.publicKey = publicKey
    }

    private enum CodingKeys: String, CodingKey {
        case flowId = "flow_id"
        case expiresIn = "expires_in"
        case publicKey = "public_key"
    }
}

/// WebAuthn's `PublicKeyCredentialCreationOptionsJSON`; binary members are base64url.
public struct PublicKeyCredentialCreationOptions: Codable, Hashable, Sendable {
    public var rp: RelyingPartyEntity
    public var user: UserEntity
    public var challenge: String
    public var pubKeyCredParams: [CredentialParameters]
    /// Milliseconds.
    public var timeout: Int?
    public var excludeCredentials: [CredentialDescriptor]
    public var authenticatorSelection: AuthenticatorSelection
    public var attestation: String
    public var extensions: Extensions?

    public init(
        rp: RelyingPartyEntity, user: UserEntity, challenge: String, pubKeyCredParams: [CredentialParameters], timeout: Int?,
        excludeCredentials: [CredentialDescriptor], authenticatorSelection: AuthenticatorSelection, attestation: String,
        extensions: Extensions? = nil
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
        self.extensions = extensions
    }

    public struct RelyingPartyEntity: Codable, Hashable, Sendable {
        public var id: String
        public var name: String
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// `id` is the user handle: random per user, never the user id or an address.
    public struct UserEntity: Codable, Hashable, Sendable {
        public var id: String
        public var name: String
        public var displayName: String
        public init(id: String, name: String, displayName: String) {
            self.id = id
            self.name = name
            self.displayName = displayName
        }
    }

    public struct CredentialParameters: Codable, Hashable, Sendable {
        public var type: String
        public var alg: Int
        public init(alg: Int) {
            self.type = "public-key"
            self.alg = alg
        }
    }

    public struct AuthenticatorSelection: Codable, Hashable, Sendable {
        public var residentKey: String
        public var requireResidentKey: Bool
        public var userVerification: String
        public init(residentKey: String, requireResidentKey: Bool, userVerification: String) {
            self.residentKey = residentKey
            self.requireResidentKey = requireResidentKey
            self.userVerification = userVerification
        }
    }

    public struct Extensions: Codable, Hashable, Sendable {
        public var credProps: Bool?
        public init(credProps: Bool? = nil) { self.credProps = credProps }
    }
}

/// A credential named in `excludeCredentials` or `allowCredentials`.
public struct CredentialDescriptor: Codable, Hashable, Sendable {
    public var type: String
    public var id: String
    public var transports: [String]?

    public init(id: String, transports: [String]? = nil) {
        self.type = "public-key"
        self.id = id
        self.transports = transports
    }
}

/// `POST /v1/passkeys/authentication/options`: a challenge for a sign-in.
public struct PasskeyRequestOptions: Codable, Hashable, Sendable {
    public var flowId: String
    public var expiresIn: Int
    public var publicKey: PublicKeyCredentialRequestOptions

    public init(flowId: String, expiresIn: Int, publicKey: PublicKeyCredentialRequestOptions) {
        self.flowId = flowId
        self.expiresIn = expiresIn
        self.publicKey = publicKey
    }

    private enum CodingKeys: String, CodingKey {
        case flowId = "flow_id"
        case expiresIn = "expires_in"
        case publicKey = "public_key"
    }
}

/// WebAuthn's `PublicKeyCredentialRequestOptionsJSON`. `allowCredentials` is empty for a usernameless
/// sign-in: the authenticator offers the discoverable credentials it holds for the RP ID.
public struct PublicKeyCredentialRequestOptions: Codable, Hashable, Sendable {
    public var challenge: String
    public var rpId: String
    public var timeout: Int?
    public var allowCredentials: [CredentialDescriptor]
    public var userVerification: String

    public init(challenge: String, rpId: String, timeout: Int?, allowCredentials: [CredentialDescriptor], userVerification: String) {
        self.challenge = challenge
        self.rpId = rpId
        self.timeout = timeout
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }
}

/// `POST /v1/passkeys/authentication/options`'s body.
public struct PasskeyOptionsRequest: Codable, Hashable, Sendable {
    public var clientId: String?

    public init(clientId: String? = nil) { self.clientId = clientId }

    private enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
    }
}

/// WebAuthn's `RegistrationResponseJSON`: what `navigator.credentials.create()` gives, as `toJSON()` writes it.
public struct RegistrationCredential: Codable, Hashable, Sendable {
    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?

    public init(id: String, rawId: String, response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = rawId
        self.type = "public-key"
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }

    public struct Response: Codable, Hashable, Sendable {
        public var clientDataJSON: String
        public var attestationObject: String
        public var transports: [String]?

        public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
        }
    }
}

/// WebAuthn's `AuthenticationResponseJSON`: what `navigator.credentials.get()` gives.
public struct AuthenticationCredential: Codable, Hashable, Sendable {
    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response
    public var authenticatorAttachment: String?

    public init(id: String, rawId: String, response: Response, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = rawId
        self.type = "public-key"
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }

    public struct Response: Codable, Hashable, Sendable {
        public var clientDataJSON: String
        public var authenticatorData: String
        public var signature: String
        /// The user handle a discoverable credential returns; required for a usernameless sign-in.
        public var userHandle: String?

        public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String?) {
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }
}

/// `POST /v1/passkeys/registration`: the authenticator's answer to a registration's options.
public struct PasskeyRegistrationRequest: Codable, Hashable, Sendable {
    public var flowId: String
    public var credential: RegistrationCredential
    /// What the user calls it ("MacBook", "YubiKey"); defaults to "Passkey".
    public var name: String?

    public init(flowId: String, credential: RegistrationCredential, name: String? = nil) {
        self.flowId = flowId
        self.credential = credential
        self.name = name
    }

    private enum CodingKeys: String, CodingKey {
        case flowId = "flow_id"
        case credential, name
    }
}

/// `POST /v1/passkeys/authentication`: signs in with a passkey's answer to the options' challenge.
public struct PasskeyAuthenticationRequest: Codable, Hashable, Sendable {
    public var clientId: String?
    public var flowId: String
    public var credential: AuthenticationCredential
    public var scope: String?

    public init(clientId: String? = nil, flowId: String, credential: AuthenticationCredential, scope: String? = nil) {
        self.clientId = clientId
        self.flowId = flowId
        self.credential = credential
        self.scope = scope
    }

    private enum CodingKeys: String, CodingKey {
        case clientId = "client_id"
        case flowId = "flow_id"
        case credential, scope
    }
}

/// A registered passkey as its owner sees it (`GET /v1/me/passkeys`).
public struct Passkey: Codable, Hashable, Sendable {
    /// The id to rename or delete it by (not the WebAuthn credential id).
    public var id: String
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// Whether the passkey may be synced to the user's other devices, and whether it is.
    public var backupEligible: Bool
    public var backedUp: Bool
    public var transports: [String]
    /// The attestation's format and what it established: `none`, `self`, `unverified`, `verified`.
    public var attestation: String
    /// The authenticator model's AAGUID, when the authenticator gave one.
    public var aaguid: String?

    public init(
        id: String, name: String, createdAt: Date, lastUsedAt: Date?, backupEligible: Bool, backedUp: Bool, transports: [String],
        attestation: String, aaguid: String?
    ) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.transports = transports
        self.attestation = attestation
        self.aaguid = aaguid
    }

    private enum CodingKeys: String, CodingKey {
        case id, name, transports, attestation, aaguid
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case backupEligible = "backup_eligible"
        case backedUp = "backed_up"
    }
}

/// `PATCH /v1/me/passkeys/{id}`.
public struct PasskeyUpdate: Codable, Hashable, Sendable {
    public var name: String
    public init(name: String) { self.name = name }
}
