import Foundation
import GatehouseAPI

/// The signed-in user's passkeys: registration (options, then the authenticator's response), list,
/// rename and removal. Adding a way to sign in is sensitive like adding a factor: it needs a recent
/// sign-in, and one that passed the second factor when the user has one, so a stolen or old session
/// cannot plant a passkey.
public struct PasskeysFlow: Sendable {
    let services: CoreServices
    let runner: FlowRunner

    /// Long enough for the browser's prompt and a security key's PIN.
    public static let challengeLifetime: TimeInterval = 300
    /// A user may hold this many; a few per device and security key is the real need.
    public static let maximumPerUser = 20

    public init(services: CoreServices) {
        self.services = services
        self.runner = FlowRunner(services: services)
    }

    /// Who adds a passkey, and how recently and strongly they signed in: an app session, or a
    /// browser session on the hosted pages (with the client whose page it is).
    public struct Enrolling: Sendable {
        public var user: UserRecord
        public var clientID: String
        public var signedInAt: Date
        public var amr: [String]

        public init(user: UserRecord, clientID: String, signedInAt: Date, amr: [String]) {
            self.user = user
            self.clientID = clientID
            self.signedInAt = signedInAt
            self.amr = amr
        }

        public init(_ principal: Principal) {
            self.init(
                user: principal.user, clientID: principal.session.clientID, signedInAt: principal.session.createdAt,
                amr: principal.session.amr)
        }

        public init(_ browser: BrowserPrincipal, clientID: String) {
            self.init(user: browser.user, clientID: clientID, signedInAt: browser.session.authTime, amr: browser.session.amr)
        }
    }

    /// A sign-in of the last 15 minutes, and one that passed the second factor when the user has one.
    func requireRecent(_ enrolling: Enrolling) async throws {
        guard services.clock.now().timeIntervalSince(enrolling.signedInAt) <= RecentSignIn.window else {
            throw GatehouseError.reauthenticationRequired
        }
        guard !enrolling.amr.contains(AuthenticationMethod.multiFactor) else { return }
        let userID = enrolling.user.id
        let enrolled = try await services.persistence.read { try await FactorPolicy.enrolledFactors(userID: userID, stores: $0) }
        if !enrolled.isEmpty { throw GatehouseError.reauthenticationRequired }
    }

    struct RegistrationData: Codable {
        var userHandle: String
        enum CodingKeys: String, CodingKey { case userHandle = "user_handle" }
    }

    public func registrationOptions(_ principal: Principal, meta: RequestMeta) async throws -> PasskeyCreationOptions {
        try await registrationOptions(Enrolling(principal), meta: meta)
    }

    public func registrationOptions(_ enrolling: Enrolling, meta: RequestMeta) async throws -> PasskeyCreationOptions {
        let client = try await services.clients.resolve(enrolling.clientID)
        try PasskeySignInFlow.requireEnabled(client)
        try await requireRecent(enrolling)
        let user = enrolling.user
        let existing = try await services.persistence.read { try await $0.credentials.list(userID: user.id, type: .passkey) }
        guard existing.count < Self.maximumPerUser else {
            throw GatehouseError.validation(
                field: nil, code: .invalidValue, message: "Remove a passkey first: at most \(Self.maximumPerUser) per user.")
        }
        let configs = existing.compactMap { try? $0.decodeConfig(PasskeyStrategy.Config.self) }
        // One handle per user, so an authenticator replaces its old passkey for this account rather
        // than keeping two; random, so it tells the authenticator nothing about the account.
        let handle = configs.first?.userHandle ?? Base64URL.encode(Secrets.randomBytes(32))
        let challenge = Base64URL.encode(Secrets.randomBytes(32))
        let data = String(decoding: try JSONEncoder().encode(RegistrationData(userHandle: handle)), as: UTF8.self)
        let begun = try await runner.begin(
            .passkeyRegistration, client: client, userID: user.id, nonce: challenge, data: data, lifetime: Self.challengeLifetime,
            meta: meta)
        let party = services.relyingParty
        let name = user.email ?? user.phone ?? "user"
        let exclude = zip(existing, configs).compactMap { credential, config in
            credential.identifiers.first.map {
                CredentialDescriptor(id: $0, transports: config.transports.isEmpty ? nil : config.transports)
            }
        }
        return PasskeyCreationOptions(
            flowId: begun.flow.id.uuidString.lowercased(), expiresIn: Int(Self.challengeLifetime),
            publicKey: PublicKeyCredentialCreationOptions(
                rp: .init(id: party.id, name: party.name), user: .init(id: handle, name: name, displayName: user.profile.name ?? name),
                challenge: challenge, pubKeyCredParams: COSEKey.supportedAlgorithms.map { .init(alg: $0.rawValue) },
                timeout: Int(Self.challengeLifetime) * 1000, excludeCredentials: exclude,
                authenticatorSelection: .init(residentKey: "required", requireResidentKey: true, userVerification: "required"),
                attestation: services.settings.passkeys.attestation, extensions: .init(credProps: true)))
    }

    public func register(_ principal: Principal, request: PasskeyRegistrationRequest, meta: RequestMeta) async throws -> Passkey {
        try await register(Enrolling(principal), request: request, meta: meta)
    }

    public func register(_ enrolling: Enrolling, request: PasskeyRegistrationRequest, meta: RequestMeta) async throws -> Passkey {
        let client = try await services.clients.resolve(enrolling.clientID)
        try PasskeySignInFlow.requireEnabled(client)
        try await requireRecent(enrolling)
        let name = try Self.name(request.name ?? "Passkey")
        let registration = try PasskeyWire.registration(request.credential)
        guard let flowID = UUID(uuidString: request.flowId) else { throw GatehouseError.challengeExpired }
        let user = enrolling.user
        let flow: FlowRecord
        do {
            flow = try await runner.complete(flowID, meta: meta)
        } catch let error as GatehouseError where error.code == .flowExpired {
            throw GatehouseError.challengeExpired
        }
        guard flow.kind == .passkeyRegistration, flow.userID == user.id, let nonce = flow.nonce,
            let challenge = Base64URL.decode(nonce),
            let data = flow.data.flatMap({ try? JSONDecoder().decode(RegistrationData.self, from: Data($0.utf8)) })
        else { throw GatehouseError.challengeExpired }

        let verified: PasskeyCeremony.NewCredential
        do {
            verified = try await PasskeyCeremony.verify(
                registration, expecting: .init(challenge: challenge, userVerification: .required), relyingParty: services.relyingParty)
        } catch {
            throw GatehouseError.invalidPasskey(error)
        }
        let now = services.clock.now()
        let config = PasskeyStrategy.Config(
            publicKey: Base64URL.encode(verified.publicKeyBytes), algorithm: verified.publicKey.algorithm.rawValue,
            signCount: verified.signCount, userHandle: data.userHandle, name: name, backupEligible: verified.backupEligible,
            backedUp: verified.backedUp, transports: Self.transports(request.credential.response.transports),
            aaguid: verified.aaguid.allSatisfy { $0 == 0 } ? nil : Self.uuidString(verified.aaguid), format: verified.format,
            trust: verified.trust, lastUsedAt: nil, flagged: nil)
        let credential = CredentialRecord(
            userID: user.id, type: .passkey, identifiers: [Base64URL.encode(verified.credentialID)],
            config: try CredentialRecord.encodeConfig(config), createdAt: now)
        do {
            try await services.persistence.transaction { stores in
                try await stores.credentials.insert(credential)
                try await services.recordEvent(
                    HookEvent(point: .factorEnrolment, clientID: client.id, method: "passkey", userID: user.id, meta: meta), stores: stores)
                // A passkey is a way back in: an anonymous account becomes permanent with it (the session
                // that registered it did the ceremony, with user verification).
                if user.isAnonymous, var stored = try await stores.users.find(id: user.id) {
                    try await AnonymousAccountsFlow.makePermanent(&stored, amr: ["hwk", "user"], now: now, stores: stores)
                }
            }
        } catch StoreError.conflict {
            throw GatehouseError.passkeyExists
        }
        return Self.wire(credential, config: config)
    }

    public func list(_ principal: Principal) async throws -> [Passkey] {
        let userID = principal.user.id
        return try await services.persistence.read { try await $0.credentials.list(userID: userID, type: .passkey) }
            .compactMap { credential in
                (try? credential.decodeConfig(PasskeyStrategy.Config.self)).map { Self.wire(credential, config: $0) }
            }
    }

    public func rename(_ principal: Principal, id: String, name: String, meta: RequestMeta) async throws -> Passkey {
        let name = try Self.name(name)
        let userID = principal.user.id
        let now = services.clock.now()
        return try await services.persistence.transaction { stores in
            guard var credential = try await stores.credentials.find(id: id), credential.userID == userID, credential.type == .passkey,
                var config = try? credential.decodeConfig(PasskeyStrategy.Config.self)
            else { throw GatehouseError.notFound("No such passkey.") }
            config.name = name
            credential.config = try CredentialRecord.encodeConfig(config)
            credential.updatedAt = now
            try await stores.credentials.update(credential)
            try await stores.audit.append(
                AuditEvent(
                    at: now, type: AuditEvent.passkeyRenamed, userID: userID, clientID: principal.session.clientID, method: "passkey",
                    meta: meta))
            return Self.wire(credential, config: config)
        }
    }

    /// Removes a passkey, unless nothing else would sign the user in, and ends the sessions it started.
    public func remove(_ principal: Principal, id: String, meta: RequestMeta) async throws {
        try await requireRecent(Enrolling(principal))
        try await Self.remove(id, userID: principal.user.id, clientID: principal.session.clientID, meta: meta, services: services)
    }

    static func remove(_ id: String, userID: UUID, clientID: String, meta: RequestMeta, services: CoreServices) async throws {
        let now = services.clock.now()
        try await services.persistence.transaction { stores in
            try await delete(id, userID: userID, at: now, stores: stores, notices: services.notices)
            try await services.recordEvent(
                HookEvent(point: .factorRemoval, clientID: clientID, method: "passkey", userID: userID, meta: meta), stores: stores)
        }
    }

    /// Deletes passkey `id` of `userID` in the caller's transaction, unless nothing else would sign the
    /// user in, and ends the sessions it started. Shared with the operator's removal.
    static func delete(_ id: String, userID: UUID, at now: Date, stores: any Stores, notices: LogoutNotices) async throws {
        // Writing the user's row first makes concurrent removals of one user take turns, so two cannot
        // each leave the other as the last way in.
        guard var user = try await stores.users.find(id: userID) else { throw GatehouseError.notFound("No such passkey.") }
        user.updatedAt = now
        try await stores.users.update(user)
        guard let credential = try await stores.credentials.find(id: id), credential.userID == userID, credential.type == .passkey
        else { throw GatehouseError.notFound("No such passkey.") }
        let others = try await stores.credentials.list(userID: userID, type: nil).filter {
            $0.id != credential.id && SignInMethods.standsAlone($0.type)
        }
        guard !others.isEmpty else { throw GatehouseError.lastSignInMethod }
        _ = try await stores.credentials.delete(id: credential.id)
        try await stores.announceEnd(of: userID, at: now, notices: notices) { $0.credentialID == credential.id }
        _ = try await stores.sessions.revokeAll(credentialID: credential.id, at: now, reason: .authenticatorRemoved)
    }

    static func wire(_ credential: CredentialRecord, config: PasskeyStrategy.Config) -> Passkey {
        Passkey(
            id: credential.id, name: config.name, createdAt: credential.createdAt, lastUsedAt: config.lastUsedAt,
            backupEligible: config.backupEligible, backedUp: config.backedUp, transports: config.transports,
            attestation: config.trust.rawValue, aaguid: config.aaguid)
    }

    static func name(_ raw: String) throws -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw GatehouseError.validation(field: "name", code: .invalidValue, message: "Name it in 1 to 64 printable characters.")
        }
        return name
    }

    /// The transports WebAuthn defines; anything else a client sends is dropped, not stored.
    static func transports(_ raw: [String]?) -> [String] {
        let known: Set<String> = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]
        return Array(Set((raw ?? []).filter(known.contains))).sorted()
    }

    static func uuidString(_ bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return Base64URL.encode(bytes) }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        ).uuidString.lowercased()
    }
}

/// Which credentials sign a user in on their own, anywhere: not a second factor, and not a device
/// authenticator, which lives on one device of one client.
enum SignInMethods {
    static func standsAlone(_ type: CredentialType) -> Bool {
        [.password, .oidc, .passkey].contains(type)
    }
}
