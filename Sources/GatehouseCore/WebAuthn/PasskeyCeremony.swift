import Crypto
import Foundation

/// The relying party's checks of WebAuthn's two ceremonies (§7.1 registration, §7.2 authentication),
/// on bytes already taken off the wire. Nothing here stores anything: the caller keeps the challenge
/// (single use) and the credential, and writes only what a verification returns.
public enum PasskeyCeremony {
    /// A new credential's response, as the client sent it (`AuthenticatorAttestationResponse`).
    public struct Registration: Sendable {
        public var credentialID: [UInt8]
        public var clientDataJSON: [UInt8]
        public var attestationObject: [UInt8]

        public init(credentialID: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8]) {
            self.credentialID = credentialID
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
        }
    }

    /// A sign-in's response (`AuthenticatorAssertionResponse`).
    public struct Assertion: Sendable {
        public var credentialID: [UInt8]
        public var clientDataJSON: [UInt8]
        public var authenticatorData: [UInt8]
        public var signature: [UInt8]
        public var userHandle: [UInt8]?

        public init(
            credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?
        ) {
            self.credentialID = credentialID
            self.clientDataJSON = clientDataJSON
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
        }
    }

    /// What the server asked for when it issued the challenge.
    public struct Expectation: Sendable {
        public var challenge: [UInt8]
        public var userVerification: UserVerificationRequirement
        /// Registration only: the algorithms the options offered.
        public var algorithms: [COSEAlgorithm]

        public init(
            challenge: [UInt8], userVerification: UserVerificationRequirement, algorithms: [COSEAlgorithm] = COSEKey.supportedAlgorithms
        ) {
            self.challenge = challenge
            self.userVerification = userVerification
            self.algorithms = algorithms
        }
    }

    /// A registration that passed every check: what to store.
    public struct NewCredential: Sendable, Equatable {
        public var credentialID: [UInt8]
        public var publicKey: COSEKey
        /// The key as the authenticator encoded it (COSE), which is what is stored.
        public var publicKeyBytes: [UInt8]
        public var signCount: UInt32
        public var aaguid: [UInt8]
        public var userVerified: Bool
        public var backupEligible: Bool
        public var backedUp: Bool
        public var format: String
        public var trust: AttestationTrust
    }

    /// A stored credential, as an assertion is checked against it.
    public struct StoredCredential: Sendable {
        public var credentialID: [UInt8]
        public var publicKey: COSEKey
        public var signCount: UInt32
        public var backupEligible: Bool

        public init(credentialID: [UInt8], publicKey: COSEKey, signCount: UInt32, backupEligible: Bool) {
            self.credentialID = credentialID
            self.publicKey = publicKey
            self.signCount = signCount
            self.backupEligible = backupEligible
        }
    }

    /// An assertion that passed every check: what to write back.
    public struct VerifiedAssertion: Sendable, Equatable {
        public var signCount: UInt32
        public var userVerified: Bool
        public var backedUp: Bool
    }

    public static func verify(
        _ response: Registration, expecting expectation: Expectation, relyingParty: RelyingParty
    ) async throws(WebAuthnError) -> NewCredential {
        try checkClientData(response.clientDataJSON, type: "webauthn.create", expectation: expectation, relyingParty: relyingParty)
        let object = try AttestationObject(response.attestationObject)
        let data = object.authenticatorData
        try checkAuthenticatorData(data, expectation: expectation, relyingParty: relyingParty)
        guard let credential = data.attestedCredential else {
            throw .malformed("the authenticator data carries no attested credential")
        }
        guard credential.credentialID == response.credentialID else {
            throw .refused("the credential id differs from the one in the authenticator data")
        }
        guard expectation.algorithms.contains(credential.publicKey.algorithm) else {
            throw .unsupportedAlgorithm(credential.publicKey.algorithm.rawValue)
        }
        let clientDataHash = Array(SHA256.hash(data: response.clientDataJSON))
        let trust = try await AttestationVerifier.verify(object, clientDataHash: clientDataHash, roots: relyingParty.attestationRoots)
        return NewCredential(
            credentialID: credential.credentialID, publicKey: credential.publicKey, publicKeyBytes: credential.publicKeyBytes,
            signCount: data.signCount, aaguid: credential.aaguid, userVerified: data.flags.contains(.userVerified),
            backupEligible: data.flags.contains(.backupEligible), backedUp: data.flags.contains(.backedUp), format: object.format,
            trust: trust)
    }

    public static func verify(
        _ response: Assertion, expecting expectation: Expectation, credential: StoredCredential, relyingParty: RelyingParty
    ) throws(WebAuthnError) -> VerifiedAssertion {
        guard response.credentialID == credential.credentialID else { throw .refused("the assertion names another credential") }
        let data = try precheck(response, expecting: expectation, relyingParty: relyingParty)
        // §6.1.3: eligibility for backup is fixed when the credential is made.
        guard data.flags.contains(.backupEligible) == credential.backupEligible else {
            throw .refused("the credential's backup eligibility changed")
        }
        let clientDataHash = Array(SHA256.hash(data: response.clientDataJSON))
        guard credential.publicKey.isValidSignature(response.signature, for: response.authenticatorData + clientDataHash) else {
            throw .badSignature
        }
        // §7.2 step 22: a counter that does not grow (when either side uses one) means a clone or a replay.
        if data.signCount != 0 || credential.signCount != 0, data.signCount <= credential.signCount {
            throw .counterWentBackwards
        }
        return VerifiedAssertion(
            signCount: data.signCount, userVerified: data.flags.contains(.userVerified), backedUp: data.flags.contains(.backedUp))
    }

    /// The checks that do not depend on the credential (client data, RP ID, flags), so a caller can
    /// refuse a malformed or misdirected response with its reason before looking anything up.
    public static func precheck(
        _ response: Assertion, expecting expectation: Expectation, relyingParty: RelyingParty
    ) throws(WebAuthnError) -> AuthenticatorData {
        try checkClientData(response.clientDataJSON, type: "webauthn.get", expectation: expectation, relyingParty: relyingParty)
        let data = try AuthenticatorData(response.authenticatorData)
        guard data.attestedCredential == nil else { throw .malformed("an assertion's authenticator data carries a credential") }
        try checkAuthenticatorData(data, expectation: expectation, relyingParty: relyingParty)
        return data
    }

    private static func checkClientData(
        _ json: [UInt8], type: String, expectation: Expectation, relyingParty: RelyingParty
    ) throws(WebAuthnError) {
        let clientData = try CollectedClientData(json: json)
        guard clientData.type == type else { throw .refused("clientDataJSON's type is not \(type)") }
        guard let challenge = Base64URL.decode(clientData.challenge),
            Secrets.constantTimeEquals(challenge, expectation.challenge)
        else { throw .refused("clientDataJSON's challenge is not the one issued") }
        guard relyingParty.origins.contains(clientData.origin) else {
            throw .refused("origin \(clientData.origin.prefix(200)) is not allowed")
        }
        // Gatehouse's pages are never framed by another site, so a cross-origin ceremony is not ours.
        guard clientData.crossOrigin != true else { throw .refused("a cross-origin ceremony is not accepted") }
    }

    private static func checkAuthenticatorData(
        _ data: AuthenticatorData, expectation: Expectation, relyingParty: RelyingParty
    ) throws(WebAuthnError) {
        guard Secrets.constantTimeEquals(data.rpIDHash, relyingParty.idHash) else {
            throw .refused("the authenticator data is for another RP ID")
        }
        guard data.flags.contains(.userPresent) else { throw .refused("the user was not present") }
        if expectation.userVerification == .required, !data.flags.contains(.userVerified) {
            throw .refused("the user was not verified")
        }
    }
}
