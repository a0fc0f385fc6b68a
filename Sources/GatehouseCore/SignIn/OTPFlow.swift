import Foundation
import GatehouseAPI

/// Passwordless sign-in with a one-time code by email or SMS. The same answers whether or not the
/// identifier has an account.
public struct OTPFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver
    let codes: OneTimeCodes
    let issuer: SessionIssuer

    public init(services: CoreServices) {
        self.services = services
        self.clients = services.clients
        self.codes = OneTimeCodes(services: services)
        self.issuer = services.issuer
    }

    struct CodeData: Codable {
        var createUser: Bool
    }

    func requireEnabled(_ identifier: Identifier, client: ClientRecord) throws {
        guard client.settings.methods.contains(identifier.method) else {
            throw GatehouseError.methodNotEnabled("This client does not offer \(identifier.method).")
        }
        if case .phone = identifier, !services.settings.smsAvailable {
            throw GatehouseError.methodNotEnabled("This server has no SMS gateway configured.")
        }
    }

    /// Per address block for every send; a text message also counts per address block, per country
    /// calling code and in total, all in one transaction so a refusal by any of them counts nothing.
    private func countSend(_ identifier: Identifier, meta: RequestMeta) async throws {
        let limits = services.rateLimits
        let now = services.clock.now()
        let report = RateLimitReport.current
        try await services.persistence.transaction { stores in
            try await limits.consume(.codeSend, ip: meta.ipAddress, stores: stores, now: now, report: report)
            if case .phone(let number) = identifier {
                try await limits.consume(.smsPerIP, ip: meta.ipAddress, stores: stores, now: now, report: report)
                try await limits.consume(.smsPerCountry, key: PhoneNumber.countryCode(number), stores: stores, now: now, report: report)
                try await limits.consume(.smsTotal, key: "all", stores: stores, now: now, report: report)
            }
        }
    }

    /// A request for a code as the core takes it, whatever carried it (the app's JSON, the hosted page's form).
    public struct CodeRequest: Sendable {
        public var clientID: String?
        public var email: String?
        public var phone: String?
        /// Whether an unknown identifier gets an account when the code is used.
        public var createUser: Bool

        public init(clientID: String?, email: String?, phone: String?, createUser: Bool = true) {
            self.clientID = clientID
            self.email = email
            self.phone = phone
            self.createUser = createUser
        }

        public init(_ wire: OTPRequest) {
            self.init(clientID: wire.clientId, email: wire.email, phone: wire.phone, createUser: wire.createUser ?? true)
        }
    }

    /// A code sign-in as the core takes it.
    public struct CodeSignIn: Sendable {
        public var clientID: String?
        public var email: String?
        public var phone: String?
        public var code: String
        public var scope: String?
        public var nonce: String?
        public var acceptTerms: Bool

        public init(
            clientID: String?, email: String?, phone: String?, code: String, scope: String? = nil, nonce: String? = nil,
            acceptTerms: Bool = false
        ) {
            self.clientID = clientID
            self.email = email
            self.phone = phone
            self.code = code
            self.scope = scope
            self.nonce = nonce
            self.acceptTerms = acceptTerms
        }

        public init(_ wire: OTPVerifyRequest) {
            self.init(
                clientID: wire.clientId, email: wire.email, phone: wire.phone, code: wire.code, scope: wire.scope, nonce: wire.nonce,
                acceptTerms: wire.acceptTerms == true)
        }
    }

    /// The app's request (`POST /v1/otp`).
    public func send(_ request: OTPRequest, meta: RequestMeta) async throws -> OTPSentResponse {
        try await send(CodeRequest(request), meta: meta)
    }

    public func send(_ request: CodeRequest, meta: RequestMeta) async throws -> OTPSentResponse {
        let client = try await clients.resolve(request.clientID)
        let identifier = try Identifier.parse(email: request.email, phone: request.phone)
        try requireEnabled(identifier, client: client)
        let settings = services.settings
        try await countSend(identifier, meta: meta)
        try await SendCooldown(services: services).claim("otp:\(client.id):\(identifier.value)", interval: settings.sendCooldown)
        let createUser = request.createUser
        let data = String(decoding: try JSONEncoder().encode(CodeData(createUser: createUser)), as: UTF8.self)
        try await services.persistence.transaction { stores in
            let user = try await identifier.findUser(in: stores)
            // Unknown and not to be created: no message, and the same answer.
            if user == nil && !createUser { return }
            if let user, user.state != .active { return }
            let issued = try await codes.issue(
                purpose: .login, identifier: identifier.value, client: client, userID: user?.id, linkTTL: nil, data: data,
                stores: stores)
            let payload = try JSONEncoder().encode([
                "code": issued.code, "client_name": client.name, "minutes": String(Int((settings.codeTTL / 60).rounded(.up))),
            ])
            try await stores.outbox.enqueue(
                OutboxMessage(
                    kind: "otp", channel: identifier.channel, recipient: identifier.value,
                    locale: (user?.profile.locale ?? meta.acceptLanguage).map { String($0.prefix(64)) },
                    sealedPayload: try services.secret.seal(payload), createdAt: services.clock.now()))
            try await services.recordCodeSent(
                purpose: "login", identifier: identifier.value, channel: identifier.channel, userID: user?.id, clientID: client.id,
                meta: meta, stores: stores)
        }
        return OTPSentResponse(
            sentTo: identifier.masked, expiresIn: Int(settings.codeTTL), resendAfter: Int(settings.sendCooldown))
    }

    /// The app's code sign-in (`POST /v1/otp/verify`).
    public func verify(_ wire: OTPVerifyRequest, meta: RequestMeta) async throws -> TokenResponse {
        let request = CodeSignIn(wire)
        let client = try await clients.resolve(request.clientID)
        let target = SessionTarget.app(.init(scopes: SessionIssuer.grant(requested: request.scope, client: client), nonce: request.nonce))
        let signedIn = try await verify(request, meta: meta, target: target)
        let started = try signedIn.started.app()
        return try await issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: signedIn.client, user: signedIn.user,
            isNew: signedIn.isNew, nonce: request.nonce)
    }

    /// The code sign-in, starting `target` (an app session, or a browser's on the hosted page)
    /// through ``SessionStarter`` in the transaction that records it.
    public func verify(_ request: CodeSignIn, meta: RequestMeta, target: SessionTarget) async throws -> SignedIn {
        let client = try await clients.resolve(request.clientID)
        let identifier = try Identifier.parse(email: request.email, phone: request.phone)
        try requireEnabled(identifier, client: client)
        if let nonce = request.nonce, nonce.count > 256 {
            throw GatehouseError.validation(field: "nonce", code: .tooLong, message: "Use at most 256 characters.")
        }
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        // The hook learns whose account it is when there is one; the lookup is skipped without hooks.
        let known = services.hooks.hasBeforeHooks ? try await services.persistence.read { try await identifier.findUser(in: $0) } : nil
        let changes = try await services.hooks.before(
            HookEvent(
                point: .login, clientID: client.id, method: identifier.method, identifier: identifier.value, userID: known?.id, meta: meta))
        let record = try await services.auditingCodeCheck(
            method: "\(identifier.channel.rawValue)_login", identifier: identifier.value, clientID: client.id, meta: meta
        ) { try await codes.redeem(code: request.code, purpose: .login, identifier: identifier.value, clientID: client.id) }
        let createUser = record.data.flatMap { try? JSONDecoder().decode(CodeData.self, from: Data($0.utf8)) }?.createUser ?? true
        let now = services.clock.now()
        let password = services.password
        let starter = services.starter
        let amr = identifier.channel == .sms ? [AuthenticationMethod.sms] : [AuthenticationMethod.oneTimeCode]
        let outcome = try await services.persistence.transaction { stores -> (UserRecord, Bool, SessionStart) in
            var isNew = false
            var user = try await identifier.findUser(in: stores)
            if user == nil {
                guard createUser else { throw OneTimeCodes.expired }
                var fresh = UserRecord(email: nil, createdAt: now)
                switch identifier {
                case .email(let email):
                    fresh.email = email
                    fresh.emailVerified = true
                case .phone(let phone):
                    fresh.phone = phone
                    fresh.phoneVerified = true
                }
                do {
                    try await stores.users.insert(fresh)
                    user = fresh
                    isNew = true
                } catch StoreError.conflict {
                    // Created a moment ago by another request (a password sign-up): sign that one in.
                    user = try await identifier.findUser(in: stores)
                }
            }
            guard var signedIn = user, signedIn.state == .active else { throw GatehouseError.accountDisabled }
            // The code proves the identifier. If the account had never proved it, whoever created it
            // may not own it: their password and sessions go, so a squatted address cannot be taken over.
            var firstProof = false
            switch identifier {
            case .email where !signedIn.emailVerified:
                signedIn.emailVerified = true
                firstProof = true
            case .phone where !signedIn.phoneVerified:
                signedIn.phoneVerified = true
                firstProof = signedIn.email == nil || !signedIn.emailVerified
            default: break
            }
            if firstProof && !isNew {
                try await password.firstProof(of: signedIn.id, at: now, stores: stores)
                signedIn.hasPassword = false
            }
            signedIn.lastLoginAt = now
            signedIn.updatedAt = now
            if let metadata = changes.appMetadata { signedIn.appMetadata = (signedIn.appMetadata ?? [:]).merging(metadata) { $1 } }
            if request.acceptTerms {
                try await TermsAcceptance.record(userID: signedIn.id, client: client, at: now, stores: stores)
            }
            let start = try await starter.start(
                Authentication(userID: signedIn.id, amr: amr, isNew: isNew), client: client, target: target, meta: meta, stores: stores)
            // A sign-in waiting for its second factor has not signed in yet; a new account exists all the same.
            if !start.isStarted { signedIn.lastLoginAt = user?.lastLoginAt }
            try await stores.users.update(signedIn)
            if isNew || start.isStarted {
                try await services.recordEvent(
                    HookEvent(
                        point: isNew ? .signup : .login, clientID: client.id, method: identifier.method, identifier: identifier.value,
                        userID: signedIn.id, meta: meta),
                    stores: stores)
            }
            return (signedIn, isNew, start)
        }
        let started = try outcome.2.get()
        await services.hooks.after(
            HookEvent(
                point: outcome.1 ? .signup : .login, clientID: client.id, method: identifier.method, identifier: identifier.value,
                userID: outcome.0.id, meta: meta))
        return SignedIn(started: started, user: outcome.0, client: client, isNew: outcome.1)
    }
}
