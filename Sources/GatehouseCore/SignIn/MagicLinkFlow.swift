import Foundation
import GatehouseAPI

/// Sign-in by a link in mail, with the same mail's code as the other way in: either works once (both
/// are records of the `login` purpose, and using one ends the other). The link is bound to the app
/// that asked by the PKCE challenge it sent: opened in that app it is redeemed with the verifier;
/// opened in a browser it returns to the app's redirect with an authorization code that needs the
/// verifier too. A link opened anywhere else gives nobody a session.
public struct MagicLinkFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// A request for the mail as the core takes it.
    public struct LinkRequest: Sendable {
        public var clientID: String?
        public var email: String
        public var redirectTo: String?
        public var codeChallenge: String?
        public var codeChallengeMethod: String?
        public var createUser: Bool
        public var acceptTerms: Bool

        public init(
            clientID: String?, email: String, redirectTo: String?, codeChallenge: String?, codeChallengeMethod: String?,
            createUser: Bool = true, acceptTerms: Bool = false
        ) {
            self.clientID = clientID
            self.email = email
            self.redirectTo = redirectTo
            self.codeChallenge = codeChallenge
            self.codeChallengeMethod = codeChallengeMethod
            self.createUser = createUser
            self.acceptTerms = acceptTerms
        }
    }

    /// Where a link opened in a browser leads.
    public enum LinkOutcome: Sendable {
        /// Back into the app with an authorization code (or a second factor's flow).
        case redirect(URL)
        /// The app asked without a redirect: only the app can use the link (as a universal link), or
        /// the code beside it. Nothing was used.
        case openInApp
    }

    /// Sends the mail: the same answer, after the same counting, whether or not the address has an
    /// account (none is sent to an unknown one when `createUser` is off).
    public func send(_ request: LinkRequest, meta: RequestMeta) async throws -> OTPSentResponse {
        let client = try await services.clients.resolve(request.clientID)
        var result = ValidationResult()
        let email = EmailAddress.validate(request.email, into: &result)
        let pkce = Self.binding(request, client: client, into: &result)
        guard result.isValid, let pkce else { throw GatehouseError.validation(result) }
        let identifier = Identifier.email(email)
        try OneTimeCodeSignIn.requireEnabled(identifier, client: client, smsAvailable: services.settings.smsAvailable)
        let settings = services.settings
        try await OTPFlow.countSend(identifier, services: services, meta: meta)
        try await services.botChallenge.require(.codeSend, client: client, meta: meta)
        // The code in the mail is the `otp` route's kind of code: one cool-down for both ways to ask.
        try await SendCooldown(services: services).claim("otp:\(client.id):\(email)", interval: settings.sendCooldown)
        let linkData = MagicLinkSignIn.LinkData(
            createUser: request.createUser, redirectTo: request.redirectTo, pkce: pkce, acceptTerms: request.acceptTerms ? true : nil)
        let data = String(decoding: try JSONEncoder().encode(linkData), as: UTF8.self)
        try await services.persistence.transaction { stores in
            let user = try await stores.users.find(email: email)
            if user == nil && !request.createUser { return }
            if let user, user.state != .active { return }
            let issued = try await services.codes.issue(
                purpose: .login, identifier: email, client: client, userID: user?.id, linkTTL: settings.codeTTL, data: data,
                stores: stores)
            let payload = try JSONEncoder().encode([
                "code": issued.code, "link": settings.publicURL + "/magic-link?token=" + (issued.token ?? ""),
                "client_name": client.name, "minutes": String(Int((settings.codeTTL / 60).rounded(.up))),
            ])
            try await stores.outbox.enqueue(
                OutboxMessage(
                    kind: "magic_link", channel: .email, recipient: email,
                    locale: (user?.profile.locale ?? meta.acceptLanguage).map { String($0.prefix(64)) },
                    sealedPayload: try services.secret.seal(payload), createdAt: services.clock.now()))
            try await services.recordCodeSent(
                purpose: MagicLinkSignIn.method, identifier: email, channel: .email, userID: user?.id, clientID: client.id, meta: meta,
                stores: stores)
        }
        return OTPSentResponse(sentTo: identifier.masked, expiresIn: Int(settings.codeTTL), resendAfter: Int(settings.sendCooldown))
    }

    /// The link opened in the app (`POST /v1/magic-link/verify`): signs in when `verifier` matches the
    /// challenge the mail was asked for with. A wrong verifier leaves the link as it was, for the app
    /// that holds the right one.
    public func verify(
        token: String, verifier: String, clientID: String?, scope: String?, nonce: String?, meta: RequestMeta
    ) async throws -> TokenResponse {
        let (record, data) = try await open(token)
        if let clientID, clientID != record.clientID { throw OneTimeCodes.expired }
        guard data.pkce.verify(verifier: verifier) else { throw OneTimeCodes.expired }
        return try await FlowRunner(services: services).signIn(
            MagicLinkSignIn(services: services), submission: .init(token: token, record: record),
            request: .init(clientID: record.clientID, scope: scope, nonce: nonce, acceptTerms: data.acceptTerms == true, meta: meta))
    }

    /// The name of the app an open link signs in to, without using the link: the page it opens asks
    /// first, so a mail scanner that fetches every link uses nothing. Nil when the link no longer works.
    public func clientName(ofOpenLink token: String) async throws -> String? {
        guard let (record, _) = try await peek(token) else { return nil }
        return try await services.clients.resolve(record.clientID).name
    }

    /// The link's page was confirmed in a browser: signs in for an authorization code bound to the
    /// app's challenge, and sends the browser to the app with it.
    public func followLink(token: String, meta: RequestMeta) async throws -> LinkOutcome {
        let (record, data) = try await open(token)
        let client = try await services.clients.resolve(record.clientID)
        guard let redirect = data.redirectTo, client.redirectURIs.contains(redirect) else { return .openInApp }
        return .redirect(
            try await LinkRedirect.after(
                {
                    try await FlowRunner(services: services).signIn(
                        MagicLinkSignIn(services: services), submission: .init(token: token, record: record),
                        request: .init(clientID: client.id, acceptTerms: data.acceptTerms == true, meta: meta),
                        target: .authorizationCode(.init(redirectURI: redirect, pkce: data.pkce)))
                }, redirect: redirect))
    }

    /// The open magic link `token` names, without using it. Unknown, used, expired or another kind of
    /// `login` record: 401 `code_expired`.
    private func open(_ token: String) async throws -> (OneTimeCodeRecord, MagicLinkSignIn.LinkData) {
        guard let opened = try await peek(token) else { throw OneTimeCodes.expired }
        return opened
    }

    private func peek(_ token: String) async throws -> (OneTimeCodeRecord, MagicLinkSignIn.LinkData)? {
        guard let record = try await services.codes.peek(token: token, purpose: .login),
            let data = record.data.flatMap({ try? JSONDecoder().decode(MagicLinkSignIn.LinkData.self, from: Data($0.utf8)) })
        else { return nil }
        return (record, data)
    }

    /// The app's binding: a registered redirect when one is named, and an S256 challenge always (a
    /// link without one could be used by whoever reads the mail on any device).
    private static func binding(_ request: LinkRequest, client: ClientRecord, into result: inout ValidationResult) -> PKCEChallenge? {
        if let redirect = request.redirectTo, !client.redirectURIs.contains(redirect) {
            result.invalidate(field: "redirect_to", code: .invalidValue, message: "redirect_to is not registered for this client.")
        }
        guard let challenge = request.codeChallenge else {
            result.invalidate(field: "code_challenge", code: .required, message: "A magic link needs a PKCE code_challenge.")
            return nil
        }
        guard let pkce = PKCEChallenge(challenge: challenge, method: request.codeChallengeMethod ?? "S256") else {
            result.invalidate(
                field: "code_challenge", code: .invalidFormat, message: "Use an S256 code_challenge: 43 base64url characters.")
            return nil
        }
        return pkce
    }
}
