import Foundation
import GatehouseAPI

extension SecondFactorFlow {
    /// The options a passkey answers to complete the waiting sign-in `flowID`: the sign-in's own
    /// challenge (``PasskeyFactor/challenge(for:secret:)``) and the user's passkeys, which only the
    /// holder of the waiting sign-in's id (who passed the first factor) learns.
    public func passkeyOptions(flowID: UUID) async throws -> PasskeyRequestOptions {
        let (flow, pending) = try await waiting(flowID)
        guard pending.factors.contains(PasskeyFactor.factorID), services.factors[PasskeyFactor.factorID] != nil else {
            throw GatehouseError.validation(field: "flow_id", code: .invalidValue, message: "This sign-in does not offer a passkey.")
        }
        let userID = pending.authentication.userID
        let passkeys = try await services.persistence.read { try await $0.credentials.list(userID: userID, type: .passkey) }
        let allowed = passkeys.compactMap { credential -> CredentialDescriptor? in
            guard let config = try? credential.decodeConfig(PasskeyStrategy.Config.self), config.flagged == nil,
                let id = credential.identifiers.first
            else { return nil }
            return CredentialDescriptor(id: id, transports: config.transports.isEmpty ? nil : config.transports)
        }
        let lifetime = max(0, Int(flow.expiresAt.timeIntervalSince(services.clock.now())))
        return PasskeyRequestOptions(
            flowId: flowID.uuidString.lowercased(), expiresIn: lifetime,
            publicKey: PublicKeyCredentialRequestOptions(
                challenge: Base64URL.encode(PasskeyFactor.challenge(for: flowID, secret: services.secret)),
                rpId: services.relyingParty.id, timeout: lifetime * 1000, allowCredentials: allowed,
                userVerification: UserVerificationRequirement.discouraged.rawValue))
    }
}
