import Foundation
import GatehouseAPI

/// Passwordless sign-in with a one-time code by email or SMS. The same answers whether or not the
/// identifier has an account.
public struct OTPFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver
    let codes: OneTimeCodes

    public init(services: CoreServices) {
        self.services = services
        self.clients = services.clients
        self.codes = services.codes
    }

    /// Per address block for every send; a text message also counts per address block, per country
    /// calling code and in total, all in one transaction so a refusal by any of them counts nothing.
    private func countSend(_ identifier: Identifier, meta: RequestMeta) async throws {
        try await Self.countSend(identifier, services: services, meta: meta)
    }

    /// The `otp` message with `code`, sealed in the outbox: a sign-in code, or a second factor's.
    static func enqueueCode(
        _ code: String, to identifier: Identifier, client: ClientRecord, locale: String?, services: CoreServices, stores: any Stores
    ) async throws {
        let payload = try JSONEncoder().encode([
            "code": code, "client_name": client.name, "minutes": String(Int((services.settings.codeTTL / 60).rounded(.up))),
        ])
        try await stores.outbox.enqueue(
            OutboxMessage(
                kind: "otp", channel: identifier.channel, recipient: identifier.value, locale: locale.map { String($0.prefix(64)) },
                sealedPayload: try services.secret.seal(payload), createdAt: services.clock.now()))
    }

    static func countSend(_ identifier: Identifier, services: CoreServices, meta: RequestMeta) async throws {
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
    }

    public func send(_ request: CodeRequest, meta: RequestMeta) async throws -> OTPSentResponse {
        let client = try await clients.resolve(request.clientID)
        let identifier = try Identifier.parse(email: request.email, phone: request.phone)
        try OneTimeCodeSignIn.requireEnabled(identifier, client: client, smsAvailable: services.settings.smsAvailable)
        let settings = services.settings
        try await countSend(identifier, meta: meta)
        try await services.botChallenge.require(.codeSend, client: client, meta: meta)
        try await SendCooldown(services: services).claim("otp:\(client.id):\(identifier.value)", interval: settings.sendCooldown)
        let createUser = request.createUser
        let data = String(decoding: try JSONEncoder().encode(OneTimeCodeSignIn.CodeData(createUser: createUser)), as: UTF8.self)
        try await services.persistence.transaction { stores in
            let user = try await identifier.findUser(in: stores)
            // Unknown and not to be created: no message, and the same answer.
            if user == nil && !createUser { return }
            if let user, user.state != .active { return }
            let issued = try await codes.issue(
                purpose: .login, identifier: identifier.value, client: client, userID: user?.id, linkTTL: nil, data: data,
                stores: stores)
            try await Self.enqueueCode(
                issued.code, to: identifier, client: client, locale: user?.profile.locale ?? meta.acceptLanguage, services: services,
                stores: stores)
            try await services.recordCodeSent(
                purpose: "login", identifier: identifier.value, channel: identifier.channel, userID: user?.id, clientID: client.id,
                meta: meta, stores: stores)
        }
        return OTPSentResponse(
            sentTo: identifier.masked, expiresIn: Int(settings.codeTTL), resendAfter: Int(settings.sendCooldown))
    }

    /// The app's code sign-in (`POST /v1/otp/verify`).
    public func verify(_ request: CodeSignIn, meta: RequestMeta) async throws -> TokenResponse {
        try await FlowRunner(services: services).signIn(
            OneTimeCodeSignIn(services: services), submission: request.submission, request: request.signIn(meta: meta))
    }

    /// The code sign-in, starting `target` (an app session, or a browser's on the hosted page), through
    /// the runner with ``OneTimeCodeSignIn``.
    public func verify(_ request: CodeSignIn, meta: RequestMeta, target: SessionTarget) async throws -> SignedIn {
        try await FlowRunner(services: services).signIn(
            OneTimeCodeSignIn(services: services), submission: request.submission, request: request.signIn(meta: meta), target: target)
    }
}

extension OTPFlow.CodeSignIn {
    var submission: OneTimeCodeSignIn.Submission { .init(email: email, phone: phone, code: code) }

    func signIn(meta: RequestMeta) -> FlowRunner.SignInRequest {
        .init(clientID: clientID, scope: scope, nonce: nonce, acceptTerms: acceptTerms, meta: meta)
    }
}
