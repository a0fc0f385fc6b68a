import Crypto
import Foundation
import GatehouseAPI

/// The signed-in user's device authenticators: register a device key with the client they signed in
/// with, list them, delete one (which ends the sessions it started).
public struct DeviceAuthenticatorsFlow: Sendable {
    let services: CoreServices

    /// More than any person has devices; bounds what one account can store.
    public static let maxPerUser = 20

    public init(services: CoreServices) { self.services = services }

    static func requireEnabled(_ client: ClientRecord) throws {
        guard client.settings.deviceAuthenticators.isOn else {
            throw GatehouseError.methodNotEnabled("This client does not offer device authenticators.")
        }
    }

    /// A device authenticator to register, as the core takes it.
    public struct Enrolment: Sendable {
        public var type: AuthenticatorType
        /// A custom authenticator's name (`custom` only).
        public var customType: String?
        public var deviceID: String
        public var deviceName: String?
        /// The P-256 public key, X9.63, base64url.
        public var publicKey: String

        public init(type: AuthenticatorType, customType: String? = nil, deviceID: String, deviceName: String? = nil, publicKey: String) {
            self.type = type
            self.customType = customType
            self.deviceID = deviceID
            self.deviceName = deviceName
            self.publicKey = publicKey
        }
    }

    public func register(
        _ principal: Principal, _ request: Enrolment, meta: RequestMeta = RequestMeta()
    ) async throws -> AuthenticatorInfo {
        let client = try await services.clients.resolve(principal.session.clientID)
        try Self.requireEnabled(client)
        var problems = ValidationResult()
        if !DeviceFields.isDeviceID(request.deviceID) {
            problems.invalidate(field: "device_id", code: .invalidFormat, message: DeviceFields.deviceIDRule)
        }
        switch (request.type, request.customType) {
        case (.custom, let name?) where DeviceFields.isCustomType(name): break
        case (.custom, _):
            problems.invalidate(
                field: "custom_type", code: .invalidFormat, message: "Name the custom authenticator with 1 to 64 of a-z, 0-9, '_' and '-'.")
        case (_, .some):
            problems.invalidate(field: "custom_type", code: .invalidValue, message: "Only a custom authenticator has a custom_type.")
        case (_, nil): break
        }
        if let name = request.deviceName, name.isEmpty || name.count > 100 {
            problems.invalidate(field: "device_name", code: .invalidFormat, message: "Use 1 to 100 characters.")
        }
        let key = DeviceAuthenticatorStrategy.publicKey(request.publicKey)
        if key == nil {
            problems.invalidate(field: "public_key", code: .invalidFormat, message: "Send a P-256 public key (X9.63, base64url).")
        }
        guard problems.isValid, let key else { throw GatehouseError.validation(problems) }
        // A new way to sign in: for a user with a second factor, only from a session that passed it.
        try await FactorsFlow.requireSecondLevel(principal, services: services)

        let keyID = DeviceAuthenticatorStrategy.keyID(of: key)
        var config = DeviceAuthenticatorStrategy.Config(
            kind: request.type, customType: request.customType, clientID: client.id, deviceID: request.deviceID,
            deviceName: request.deviceName, keyID: keyID, publicKey: Base64URL.encode(key.x963Representation))
        config.multiFactor = principal.session.amr.contains(AuthenticationMethod.multiFactor) ? true : nil
        let now = services.clock.now()
        let credential = CredentialRecord(
            userID: principal.user.id, type: .deviceAuthenticator,
            identifiers: [DeviceAuthenticatorStrategy.identifier(deviceID: request.deviceID, keyID: keyID)],
            config: try CredentialRecord.encodeConfig(config), createdAt: now)
        let userID = principal.user.id
        do {
            try await services.persistence.transaction { stores in
                let existing = try await stores.credentials.list(userID: userID, type: .deviceAuthenticator)
                guard existing.count < Self.maxPerUser else {
                    throw GatehouseError.validation(
                        field: nil, code: .invalidValue, message: "Remove an authenticator first: at most \(Self.maxPerUser) per account.")
                }
                try await stores.credentials.insert(credential)
                try await stores.audit.append(
                    AuditEvent(
                        at: now, type: AuditEvent.authenticatorRegistered, userID: userID, clientID: client.id,
                        method: request.type.rawValue, meta: meta))
            }
        } catch StoreError.conflict {
            throw GatehouseError.authenticatorExists
        }
        return Self.info(credential, config: config, limit: client.settings.maxFailureCount)
    }

    public func list(_ principal: Principal) async throws -> AuthenticatorList {
        let userID = principal.user.id
        let credentials = try await services.persistence.read {
            try await $0.credentials.list(userID: userID, type: .deviceAuthenticator)
        }
        var infos: [AuthenticatorInfo] = []
        for credential in credentials {
            guard let config = try? credential.decodeConfig(DeviceAuthenticatorStrategy.Config.self) else { continue }
            let client = try? await services.clients.resolve(config.clientID)
            infos.append(Self.info(credential, config: config, limit: client?.settings.maxFailureCount ?? 3))
        }
        return AuthenticatorList(authenticators: infos)
    }

    /// Deletes one of the caller's authenticators and ends its sessions; another user's is "not found".
    public func delete(_ principal: Principal, id: String, meta: RequestMeta = RequestMeta()) async throws {
        let now = services.clock.now()
        let userID = principal.user.id
        let deleted = try await services.persistence.transaction { stores -> Bool in
            guard let credential = try await stores.credentials.find(id: id), credential.userID == userID,
                credential.type == .deviceAuthenticator
            else { return false }
            _ = try await stores.credentials.delete(id: id)
            try await stores.announceEnd(of: userID, at: now, notices: services.notices) { $0.credentialID == id }
            _ = try await stores.sessions.revokeAll(credentialID: id, at: now, reason: .authenticatorRemoved)
            try await services.recordEvent(
                HookEvent(
                    point: .authenticatorRemoval, clientID: principal.session.clientID, method: CredentialType.deviceAuthenticator.rawValue,
                    userID: userID, meta: meta),
                stores: stores)
            return true
        }
        guard deleted else { throw GatehouseError.notFound("No such authenticator.") }
    }

    static func info(_ credential: CredentialRecord, config: DeviceAuthenticatorStrategy.Config, limit: Int) -> AuthenticatorInfo {
        AuthenticatorInfo(
            id: credential.id, type: config.kind, customType: config.customType, clientId: config.clientID,
            deviceId: config.deviceID, deviceName: config.deviceName, maxFailureCount: limit,
            failureCount: min(credential.failureCount, limit), createdAt: credential.createdAt)
    }
}
