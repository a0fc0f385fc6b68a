import Foundation
import GatehouseAPI

/// Passkeys: a WebAuthn public key credential, identifier its credential id (base64url). A sign-in is
/// an assertion over a single-use challenge with the user verified (PIN, biometrics), so it proves
/// two factors at once: the device that holds the key and the user who unlocked it.
public struct PasskeyStrategy: CredentialStrategy {
    public struct Submission: Sendable {
        public var assertion: PasskeyCeremony.Assertion
        public var expectation: PasskeyCeremony.Expectation
        public var relyingParty: RelyingParty
        public var now: Date

        public init(
            assertion: PasskeyCeremony.Assertion, expectation: PasskeyCeremony.Expectation, relyingParty: RelyingParty, now: Date
        ) {
            self.assertion = assertion
            self.expectation = expectation
            self.relyingParty = relyingParty
            self.now = now
        }
    }

    /// The config of a passkey (version 1): the public key and what the authenticator said about it.
    public struct Config: Codable, Sendable, Equatable {
        /// The COSE key as the authenticator encoded it, base64url.
        public var publicKey: String
        public var algorithm: Int
        public var signCount: UInt32
        /// The user handle the authenticator keeps with the credential (base64url): random per user.
        public var userHandle: String
        public var name: String
        public var backupEligible: Bool
        public var backedUp: Bool
        public var transports: [String]
        public var aaguid: String?
        public var format: String
        public var trust: AttestationTrust
        public var lastUsedAt: Date?
        /// Why the credential is suspect (`counter_went_backwards`), when it is.
        public var flagged: String?

        public init(
            publicKey: String, algorithm: Int, signCount: UInt32, userHandle: String, name: String, backupEligible: Bool,
            backedUp: Bool, transports: [String], aaguid: String?, format: String, trust: AttestationTrust, lastUsedAt: Date?,
            flagged: String?
        ) {
            self.publicKey = publicKey
            self.algorithm = algorithm
            self.signCount = signCount
            self.userHandle = userHandle
            self.name = name
            self.backupEligible = backupEligible
            self.backedUp = backedUp
            self.transports = transports
            self.aaguid = aaguid
            self.format = format
            self.trust = trust
            self.lastUsedAt = lastUsedAt
            self.flagged = flagged
        }

        enum CodingKeys: String, CodingKey {
            case algorithm, name, transports, aaguid, format, trust, flagged
            case publicKey = "public_key"
            case signCount = "sign_count"
            case userHandle = "user_handle"
            case backupEligible = "backup_eligible"
            case backedUp = "backed_up"
            case lastUsedAt = "last_used_at"
        }
    }

    public init() {}

    public var type: CredentialType { .passkey }
    /// RFC 8176: a key held by hardware (`hwk`), the user verified by the authenticator (`user`), and
    /// so more than one factor (`mfa`).
    public var amr: [String] { ["hwk", "user", AuthenticationMethod.multiFactor] }
    /// A passkey proves the device and the user, not the email address.
    public var provesIdentifier: Bool { false }

    public func identifier(of submission: Submission) throws -> String {
        let id = submission.assertion.credentialID
        guard !id.isEmpty, id.count <= AuthenticatorData.maximumCredentialIDLength else { throw GatehouseError.invalidCredentials }
        return Base64URL.encode(id)
    }

    /// A credential id is no secret, but it is no name either: hooks and the audit log get the user's id.
    public func shownIdentifier(of submission: Submission) -> String? { nil }

    public func verify(_ submission: Submission, against credential: CredentialRecord) async throws -> CredentialVerification {
        // A passkey seen with a counter that went backwards may have a clone: neither copy signs in
        // again until the owner removes it and registers anew.
        guard var config = try? credential.decodeConfig(Config.self), config.flagged == nil,
            let stored = Self.stored(config, credentialID: credential)
        else { return .rejected }
        // A usernameless sign-in names the account by the user handle: it must be this credential's.
        if let handle = submission.assertion.userHandle,
            !Secrets.constantTimeEquals(Base64URL.encode(handle), config.userHandle)
        {
            return .rejected
        }
        let result = Result { () throws(WebAuthnError) in
            try PasskeyCeremony.verify(
                submission.assertion, expecting: submission.expectation, credential: stored, relyingParty: submission.relyingParty)
        }
        switch result {
        case .success(let verified):
            config.signCount = verified.signCount
            config.backedUp = verified.backedUp
            config.lastUsedAt = submission.now
            return .verified(upgradedConfig: try CredentialRecord.encodeConfig(config))
        case .failure(.counterWentBackwards):
            config.flagged = "counter_went_backwards"
            return .flagged(config: try CredentialRecord.encodeConfig(config))
        case .failure:
            return .rejected
        }
    }

    /// No account-and-address throttle: an answer needs a registered key's signature over a fresh
    /// challenge, so there is nothing to guess, and the count was a write transaction per sign-in (as
    /// for device challenges, threat model A2). Each challenge takes one answer.
    public var usesSignInThrottle: Bool { false }

    /// Nothing to equalise: credential ids are random, so an unknown one says nothing about an account.
    public func verifyUnknown(_ submission: Submission) async throws {}

    /// The stored half of an assertion check, from a credential's config.
    static func stored(_ config: Config, credentialID credential: CredentialRecord) -> PasskeyCeremony.StoredCredential? {
        guard let id = credential.identifiers.first.flatMap(Base64URL.decode), let bytes = Base64URL.decode(config.publicKey),
            let value = try? CBORDecoder.decode(bytes), let key = try? COSEKey(value)
        else { return nil }
        return PasskeyCeremony.StoredCredential(
            credentialID: id, publicKey: key, signCount: config.signCount, backupEligible: config.backupEligible)
    }
}
