import Foundation
import GatehouseAPI

// The names before every sign-in was `signIn…`, every sign-out `signOut`, and every sign-in answered
// one `SignInResult` (issue #28). Each forwards to its new name, so apps built on them still compile
// and behave the same; the compiler's fix-it renames the call. Calls that returned a bare `User`
// still do: the new ones answer a `SignInResult`, whose `user` it is.

/// The one-time code sign-in's result before every sign-in answered the same type.
@available(*, deprecated, renamed: "SignInResult")
public typealias CodeSignIn = SignInResult

extension SignInResult {
    /// `CodeSignIn`'s initializer, from before a result carried its session: the session is an
    /// empty, already expired placeholder, good for fixtures and nothing else.
    @available(*, deprecated, message: "Use init(user:isNew:session:); this one's session is an empty, expired placeholder.")
    public init(user: User, isNew: Bool) {
        self.init(user: user, isNew: isNew, session: Session(accessToken: "", accessTokenExpiresAt: .distantPast, user: user))
    }
}

extension AuthClient {
    /// The password sign-in's old name.
    @available(
        *, deprecated, renamed: "signIn(email:password:scopes:nonce:persist:)",
        message: "Returns a SignInResult; its user is what this returned."
    )
    @discardableResult
    public func logIn(
        email: String, password: String, scopes: Set<Scope> = [], nonce: String? = nil, persist: Bool = true
    ) async throws -> User {
        try await signIn(email: email, password: password, scopes: scopes, nonce: nonce, persist: persist).user
    }

    /// The field-dictionary sign-in's old name (Primer's).
    @available(
        *, deprecated, renamed: "signIn(withFields:scopes:persist:)", message: "Returns a SignInResult; its user is what this returned."
    )
    @discardableResult
    public func logIn(withFields fields: [String: String], scopes: Set<Scope> = [], persist: Bool = true) async throws -> User {
        try await signIn(withFields: fields, scopes: scopes, persist: persist).user
    }

    /// The sign-out's old name.
    @available(*, deprecated, renamed: "signOut(scope:)")
    @discardableResult
    public func logOut(scope: LogoutScope = .local) async throws -> LogoutOutcome {
        try await signOut(scope: scope)
    }

    /// The one-time code sign-in's old name.
    @available(*, deprecated, renamed: "signIn(code:for:scopes:nonce:acceptTerms:persist:)")
    @discardableResult
    public func verifyCode(
        _ code: String, for destination: CodeDestination, scopes: Set<Scope> = [], nonce: String? = nil,
        acceptTerms: Bool? = nil, persist: Bool = true
    ) async throws -> SignInResult {
        try await signIn(code: code, for: destination, scopes: scopes, nonce: nonce, acceptTerms: acceptTerms, persist: persist)
    }

    /// The old name of the sign-in with the mail's verification code.
    @available(
        *, deprecated, renamed: "signIn(email:verificationCode:persist:)",
        message: "Returns a SignInResult; its user is what this returned."
    )
    @discardableResult
    public func verifyEmail(_ email: String, code: String, persist: Bool = true) async throws -> User {
        try await signIn(email: email, verificationCode: code, persist: persist).user
    }

    /// The old name of the sign-in with the mail's recovery code.
    @available(
        *, deprecated, renamed: "signIn(email:recoveryCode:persist:)", message: "Returns a SignInResult; its user is what this returned."
    )
    @discardableResult
    public func verifyPasswordReset(email: String, code: String, persist: Bool = true) async throws -> User {
        try await signIn(email: email, recoveryCode: code, persist: persist).user
    }

    /// The old name of the sign-in with an authorization code.
    @available(
        *, deprecated, renamed: "signIn(authorizationCode:persist:)", message: "Returns a SignInResult; its user is what this returned."
    )
    @discardableResult
    public func exchange(code: String, persist: Bool = true) async throws -> User {
        try await signIn(authorizationCode: code, persist: persist).user
    }

    /// The old name of the sign-in from a provider's web redirect.
    @available(*, deprecated, renamed: "signIn(fromSocialRedirect:persist:)")
    @discardableResult
    public func completeSocialSignIn(from url: URL, persist: Bool = true) async throws -> SignInResult {
        try await signIn(fromSocialRedirect: url, persist: persist)
    }

    /// The old name of the sign-in from the hosted page's redirect.
    @available(*, deprecated, renamed: "signIn(fromBrowserRedirect:persist:)")
    @discardableResult
    public func completeBrowserSignIn(from url: URL, persist: Bool = true) async throws -> SignInResult {
        try await signIn(fromBrowserRedirect: url, persist: persist)
    }
}
