import Foundation
import GatehouseAPI

/// Signing in with a device authenticator: a single-use challenge, then its signature through the
/// flow runner, which counts every attempt before checking it and deletes the authenticator at the
/// client's `max_failure_count`.
public struct DeviceAuthenticationFlow: Sendable {
    let services: CoreServices
    let runner: FlowRunner
    let strategy = DeviceAuthenticatorStrategy()

    /// Long enough to ask for a PIN, short enough that a leaked challenge is soon worthless.
    public static let challengeLifetime: TimeInterval = 120

    public init(services: CoreServices) {
        self.services = services
        self.runner = FlowRunner(services: services)
    }

    /// The challenge the data of a device-challenge flow names.
    struct ChallengeData: Codable {
        var credentialID: String
        enum CodingKeys: String, CodingKey { case credentialID = "credential_id" }
    }

    /// A challenge asked for, as the core takes it.
    public struct ChallengeRequest: Sendable {
        public var clientID: String?
        public var authenticatorID: String

        public init(clientID: String?, authenticatorID: String) {
            self.clientID = clientID
            self.authenticatorID = authenticatorID
        }
    }

    /// A challenge's answer, as the core takes it.
    public struct Answer: Sendable {
        public var clientID: String?
        public var challengeID: String
        /// The signature over the challenge, base64url.
        public var signature: String
        public var scope: String?
        /// What a custom authenticator sends besides its signature, for the operator's hook.
        public var customData: String?

        public init(clientID: String?, challengeID: String, signature: String, scope: String? = nil, customData: String? = nil) {
            self.clientID = clientID
            self.challengeID = challengeID
            self.signature = signature
            self.scope = scope
            self.customData = customData
        }
    }

    public func challenge(_ request: ChallengeRequest, meta: RequestMeta) async throws -> DeviceChallenge {
        let client = try await services.clients.resolve(request.clientID)
        try DeviceAuthenticatorsFlow.requireEnabled(client)
        guard !request.authenticatorID.isEmpty, request.authenticatorID.count <= 64 else {
            throw GatehouseError.validation(
                field: "authenticator_id", code: .invalidFormat, message: "Use the id the registration answered.")
        }
        let id = request.authenticatorID
        guard
            let credential = try await services.persistence.read({ try await $0.credentials.find(id: id) }),
            credential.type == .deviceAuthenticator,
            let config = try? credential.decodeConfig(DeviceAuthenticatorStrategy.Config.self), config.clientID == client.id
        else { throw GatehouseError.deviceDeregistered() }

        let nonce = Base64URL.encode(Secrets.randomBytes(32))
        let data = String(decoding: try JSONEncoder().encode(ChallengeData(credentialID: credential.id)), as: UTF8.self)
        // Not counted per address: it needs a registered authenticator's random id first, and the count
        // cost 5 % of device sign-ins (threat model A2).
        let begun = try await runner.begin(
            .deviceChallenge, client: client, userID: credential.userID, nonce: nonce, data: data, lifetime: Self.challengeLifetime,
            meta: meta)
        let limit = client.settings.maxFailureCount
        return DeviceChallenge(
            challengeId: begun.flow.id.uuidString.lowercased(), challenge: nonce, expiresIn: Int(Self.challengeLifetime),
            counts: FailureCounts(max: limit, previous: min(credential.failureCount, limit)))
    }

    public func authenticate(_ request: Answer, meta: RequestMeta) async throws -> TokenResponse {
        let client = try await services.clients.resolve(request.clientID)
        try DeviceAuthenticatorsFlow.requireEnabled(client)
        guard let signature = Base64URL.decode(request.signature), (64...80).contains(signature.count) else {
            throw GatehouseError.validation(field: "signature", code: .invalidFormat, message: "Send the signature as base64url.")
        }
        if let custom = request.customData, custom.utf8.count > 4096 {
            throw GatehouseError.validation(field: "custom_data", code: .tooLong, message: "Use at most 4096 bytes.")
        }
        guard let challengeID = UUID(uuidString: request.challengeID) else { throw GatehouseError.challengeExpired }

        // Consumed before the signature is looked at: a challenge is good for one answer, right or wrong.
        let flow: FlowRecord
        do {
            flow = try await runner.complete(challengeID, meta: meta)
        } catch let error as GatehouseError where error.code == .flowExpired {
            throw GatehouseError.challengeExpired
        }
        guard flow.kind == .deviceChallenge, flow.clientID == client.id, let nonce = flow.nonce,
            let data = flow.data.flatMap({ try? JSONDecoder().decode(ChallengeData.self, from: Data($0.utf8)) })
        else { throw GatehouseError.challengeExpired }
        guard
            let credential = try await services.persistence.read({ try await $0.credentials.find(id: data.credentialID) }),
            let config = try? credential.decodeConfig(DeviceAuthenticatorStrategy.Config.self)
        else { throw GatehouseError.deviceDeregistered() }

        let message = DeviceSignature.message(
            challengeID: request.challengeID.lowercased(), challenge: nonce, clientID: client.id, deviceID: config.deviceID,
            authenticatorID: credential.id)
        let submission = DeviceAuthenticatorStrategy.Submission(
            deviceID: config.deviceID, keyID: config.keyID, clientID: client.id, message: message, signature: Data(signature))
        do {
            return try await runner.signIn(
                with: strategy, submission: submission,
                request: .init(clientID: client.id, scope: request.scope, customData: request.customData, meta: meta))
        } catch let error as GatehouseError where error.code == .invalidCredentials {
            // Deleted between the challenge and its answer.
            throw GatehouseError.deviceDeregistered()
        }
    }
}
