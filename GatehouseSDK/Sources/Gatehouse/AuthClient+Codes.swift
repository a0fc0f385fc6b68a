import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a one-time code goes.
public enum CodeDestination: Sendable, Hashable {
    case email(String)
    case phone(String)
}

extension AuthClient {
    /// Sends a one-time code; sending again inside the cool-down is ``GatehouseError/isRateLimited``.
    /// The answer's `resendAfter` says when ``resendCode(to:createUser:)`` will be accepted.
    public func sendCode(to destination: CodeDestination, createUser: Bool = true) async throws -> OTPSentResponse {
        try await check(Self.fields(of: destination), for: .sendCode)
        let sent = try await postCode(to: destination, createUser: createUser)
        sentCodes[destination] = createUser
        return sent
    }

    /// Sends the code for `destination` again; the new code replaces the old one, which stops working.
    /// Inside the cool-down this is ``GatehouseError/isRateLimited`` with `retryAfter`.
    ///
    /// - Parameters:
    ///   - destination: the address or phone number the code went to.
    ///   - createUser: whether the code may create the account; by default what the earlier
    ///     ``sendCode(to:createUser:)`` in this process asked for, and `false` when there was none
    ///     (after a relaunch, say), so a resend never turns a sign-in into a sign-up the app did not
    ///     ask for.
    @discardableResult
    public func resendCode(to destination: CodeDestination, createUser: Bool? = nil) async throws -> OTPSentResponse {
        try await check(Self.fields(of: destination), for: .sendCode)
        return try await postCode(to: destination, createUser: createUser ?? sentCodes[destination] ?? false)
    }

    /// A destination as the field it is sent as.
    static func fields(of destination: CodeDestination) -> [String: String?] {
        switch destination {
        case .email(let email): ["email": email]
        case .phone(let phone): ["phone": phone]
        }
    }

    private func postCode(to destination: CodeDestination, createUser: Bool) async throws -> OTPSentResponse {
        var body = OTPRequest(clientId: configuration.clientID, createUser: createUser)
        switch destination {
        case .email(let email): body.email = email
        case .phone(let phone): body.phone = phone
        }
        return try await http.send(try await challenged(try http.json(http.request("POST", "/v1/otp"), body: body), .codeSend))
    }

    /// Signs in with the one-time code sent to `destination`. A code may create the account (unless
    /// it was sent with `createUser: false`), so ``SignInResult/isNew`` matters most here.
    /// `scopes`, `nonce` and `persist` work as for ``signIn(email:password:scopes:nonce:persist:)``;
    /// `acceptTerms` accepts the client's current terms with the sign-in.
    @discardableResult
    public func signIn(
        code: String, for destination: CodeDestination, scopes: Set<Scope> = [], nonce: String? = nil,
        acceptTerms: Bool? = nil, persist: Bool = true
    ) async throws -> SignInResult {
        try await check(Self.fields(of: destination).merging(["code": code]) { given, _ in given }, for: .verifyCode)
        var body = OTPVerifyRequest(
            clientId: configuration.clientID, code: code, scope: scopes.wireValue, nonce: nonce, acceptTerms: acceptTerms)
        switch destination {
        case .email(let email): body.email = email
        case .phone(let phone): body.phone = phone
        }
        let tokens: TokenResponse = try await http.send(try http.json(http.request("POST", "/v1/otp/verify"), body: body))
        return try await adopt(tokens, persist: persist)
    }

    /// Whether an identifier has an account (only for clients that enable it).
    public func identifierStatus(_ destination: CodeDestination) async throws -> IdentifierStatus {
        let item: URLQueryItem =
            switch destination {
            case .email(let email): URLQueryItem(name: "email", value: email)
            case .phone(let phone): URLQueryItem(name: "phone", value: phone)
            }
        return try await http.send(http.request("GET", "/v1/identifiers/status", query: [item], clientID: configuration.clientID))
    }

    /// The platform's and the client's terms.
    public func terms() async throws -> Terms {
        try await http.send(http.request("GET", "/v1/terms", clientID: configuration.clientID))
    }

    /// What the user accepted, and whether it is current.
    public func agreements() async throws -> Agreements {
        try await authorized(http.request("GET", "/v1/me/agreements"))
    }

    /// Accepts the current terms.
    public func acceptTerms(_ terms: Terms) async throws {
        try await authorized(
            try http.json(
                http.request("POST", "/v1/me/agreements"),
                body: Agreements(platformVersion: terms.platform?.version, clientVersion: terms.client?.version)))
    }

    /// The profile fields the client requires.
    public func requiredFields() async throws -> [String] {
        let fields: RequiredFields = try await http.send(http.request("GET", "/v1/required-fields", clientID: configuration.clientID))
        return fields.requiredFields
    }

    /// The required fields the signed-in user has not filled in.
    public func missingRequiredFields() async throws -> [String] {
        let fields: RequiredFields = try await authorized(http.request("GET", "/v1/me/required-fields"))
        return fields.requiredFields
    }

    /// The client's name, methods, terms, required fields and password policy.
    public func clientInfo() async throws -> ClientInfo {
        try await http.send(http.request("GET", "/v1/client", clientID: configuration.clientID))
    }
}
