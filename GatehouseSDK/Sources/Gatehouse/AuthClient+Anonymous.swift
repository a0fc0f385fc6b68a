import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AuthClient {
    /// Starts an anonymous account (on clients that allow them): a real user id and a session, with
    /// ``User/isAnonymous`` set and `is_anonymous` in its tokens, and no way to sign in again until it
    /// is upgraded. Signing out of it loses it; the server deletes it once it goes unused long enough.
    @discardableResult
    public func signInAnonymously(persist: Bool = true) async throws -> SignInResult {
        let request = try http.json(http.request("POST", "/v1/anonymous"), body: AnonymousSignInRequest(clientId: configuration.clientID))
        return try await adopt(try await http.send(try await challenged(request, .signUp)), persist: persist)
    }

    /// Upgrades the signed-in anonymous account with an address and a password: the same user id and
    /// data, now able to sign in with ``signIn(email:password:scopes:nonce:persist:)``. A verification
    /// mail goes to the address. An address another account has is ``GatehouseError/code``
    /// `already_registered` (sign in to that account instead); the anonymous account stays as it was.
    @discardableResult
    public func upgrade(email: String, password: String) async throws -> User {
        try await check(["email": email, "password": password], for: .signUp)
        return try await upgraded(
            try http.json(http.request("POST", "/v1/me/upgrade"), body: AccountUpgradeRequest(email: email, password: password)))
    }

    /// Sends a code to the address the anonymous account is to take; ``upgrade(email:code:)`` completes it.
    @discardableResult
    public func sendUpgradeCode(to email: String) async throws -> OTPSentResponse {
        try await authorized(try http.json(http.request("POST", "/v1/me/upgrade/code"), body: AccountUpgradeRequest(email: email)))
    }

    /// Upgrades the signed-in anonymous account with an address proved by the code from
    /// ``sendUpgradeCode(to:)``: the same user id and data, the address verified, so codes to it sign
    /// in from now on.
    @discardableResult
    public func upgrade(email: String, code: String) async throws -> User {
        try await upgraded(
            try http.json(http.request("POST", "/v1/me/upgrade/verify"), body: AccountUpgradeRequest(email: email, code: code)))
    }

    /// The upgrade, then a refresh: the session goes on, and its next tokens no longer say
    /// `is_anonymous`.
    private func upgraded(_ request: URLRequest) async throws -> User {
        let user: User = try await authorized(request)
        try await updateStored(user)
        try await refreshSession()
        return user
    }
}
