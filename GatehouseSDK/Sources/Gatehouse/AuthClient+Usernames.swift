import Foundation
import GatehouseAPI

extension AuthClient {
    /// Creates an account with a username besides its email address, on a client that uses usernames
    /// (`usernames=optional|required` on the server). The server compares usernames case folded and
    /// NFKC-normalized (`Ａda` is `ada`) and answers a field error on `username` when one is taken
    /// (`already_registered`), reserved (`invalid_value`) or not of the allowed shape.
    public func signUp(
        email: String, password: String, username: String, profile: Profile? = nil, acceptTerms: Bool? = nil, persist: Bool = true
    ) async throws -> SignUpResult {
        let fields: [String: String?] = ["email": email, "password": password, "username": username]
        try await check(fields.merging(Self.fields(of: profile)) { given, _ in given }, for: .signUp)
        return try await sendSignUp(
            email: email, password: password, profile: profile, acceptTerms: acceptTerms, persist: persist, username: username)
    }

    /// Signs in with a username and password; otherwise the same as
    /// ``signIn(email:password:scopes:nonce:persist:)``. An unknown username and a wrong password get
    /// the same `invalid_credentials`.
    @discardableResult
    public func signIn(
        username: String, password: String, scopes: Set<Scope> = [], nonce: String? = nil, persist: Bool = true
    ) async throws -> SignInResult {
        try await check(["username": username, "password": password], for: .logIn)
        return try await sendLogIn(email: "", password: password, scopes: scopes, nonce: nonce, persist: persist, username: username)
    }

    /// Whether a username has an account (only for clients that enable identifier status).
    public func identifierStatus(username: String) async throws -> IdentifierStatus {
        try await http.send(
            http.request(
                "GET", "/v1/identifiers/status", query: [URLQueryItem(name: "username", value: username)], clientID: configuration.clientID)
        )
    }
}
