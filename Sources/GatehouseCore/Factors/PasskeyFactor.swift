import Foundation
import GatehouseAPI

/// A passkey as the second step of a sign-in that passed its first factor (a password, a code). The
/// challenge is the waiting sign-in's own, derived from its flow id under the server secret, so it
/// needs no row of its own and an assertion for one waiting sign-in answers no other; the flow's single
/// completion and its counted attempts make it single use. User presence is required, user
/// verification is not: possession of the key is the second factor.
public struct PasskeyFactor: SecondFactor {
    let secret: ServerSecret
    let relyingParty: RelyingParty
    let clock: any WallClock

    public init(secret: ServerSecret, relyingParty: RelyingParty, clock: any WallClock) {
        self.secret = secret
        self.relyingParty = relyingParty
        self.clock = clock
    }

    public static let factorID = "passkey"

    public var id: String { Self.factorID }
    /// RFC 8176: proof of possession of a hardware-secured key.
    public var amr: String { "hwk" }

    /// The challenge of the waiting sign-in `flowID`.
    public static func challenge(for flowID: UUID, secret: ServerSecret) -> [UInt8] {
        Base64URL.decode(secret.csrfToken(for: "passkey-factor:" + flowID.uuidString.lowercased())) ?? []
    }

    /// Without the waiting sign-in there is no challenge: never right.
    public func verify(_ response: String, userID: UUID, stores: any Stores) async throws -> Bool { false }

    public func verify(_ response: String, userID: UUID, clientID: String, flowID: UUID, stores: any Stores) async throws -> Bool {
        guard let wire = try? JSONDecoder().decode(AuthenticationCredential.self, from: Data(response.utf8)),
            let assertion = try? PasskeyWire.assertion(wire)
        else { return false }
        let expectation = PasskeyCeremony.Expectation(
            challenge: Self.challenge(for: flowID, secret: secret), userVerification: .discouraged)
        guard let credential = try await stores.credentials.find(type: .passkey, identifier: Base64URL.encode(assertion.credentialID)),
            credential.userID == userID, var config = try? credential.decodeConfig(PasskeyStrategy.Config.self), config.flagged == nil,
            let stored = PasskeyStrategy.stored(config, credentialID: credential)
        else { return false }
        let result = Result { () throws(WebAuthnError) in
            try PasskeyCeremony.verify(assertion, expecting: expectation, credential: stored, relyingParty: relyingParty)
        }
        switch result {
        case .success(let verified):
            var updated = credential
            updated.updatedAt = clock.now()
            config.signCount = verified.signCount
            config.backedUp = verified.backedUp
            config.lastUsedAt = clock.now()
            updated.config = try CredentialRecord.encodeConfig(config)
            try await stores.credentials.update(updated)
            return true
        case .failure:
            // A counter gone backwards is refused here like any wrong answer, but not marked: a wrong
            // answer rolls back the transaction it is checked in (the one that would start the session).
            // A first-factor sign-in with the same passkey marks it.
            return false
        }
    }
}
