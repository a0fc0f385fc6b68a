#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
    import AuthenticationServices
    import Foundation
    import GatehouseAPI

    /// Passkeys with the platform's authenticator (iCloud Keychain, or a security key over USB, NFC or
    /// Bluetooth), through `ASAuthorizationPlatformPublicKeyCredentialProvider` and
    /// `ASAuthorizationSecurityKeyPublicKeyCredentialProvider`. The app's associated domains must list
    /// `webcredentials:` the server's RP ID, and the server must name the app
    /// (`GATEHOUSE_APPLE_APP_IDS`, served in its `apple-app-site-association`).
    ///
    /// ```swift
    /// let passkeys = PlatformPasskeys(client: auth)
    /// try await passkeys.registerPasskey(name: "iPhone", anchor: view.window!)   // signed in
    /// try await passkeys.signInWithPasskey(anchor: view.window!)                 // signed out
    /// ```
    @available(iOS 16.0, macOS 13.0, visionOS 1.0, *)
    @MainActor
    public struct PlatformPasskeys {
        public let client: AuthClient

        public init(client: AuthClient) { self.client = client }

        /// Creates a passkey for the signed-in user and registers it with the server.
        @discardableResult
        public func registerPasskey(name: String? = nil, anchor: ASPresentationAnchor) async throws -> Passkey {
            let options = try await client.passkeyRegistrationOptions()
            let publicKey = options.publicKey
            guard let challenge = Data(base64URL: publicKey.challenge), let userID = Data(base64URL: publicKey.user.id) else {
                throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "Unreadable passkey options.")
            }
            let platform = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: publicKey.rp.id)
                .createCredentialRegistrationRequest(challenge: challenge, name: publicKey.user.name, userID: userID)
            platform.userVerificationPreference = .required
            let key = ASAuthorizationSecurityKeyPublicKeyCredentialProvider(relyingPartyIdentifier: publicKey.rp.id)
                .createCredentialRegistrationRequest(
                    challenge: challenge, displayName: publicKey.user.displayName, name: publicKey.user.name, userID: userID)
            key.credentialParameters = publicKey.pubKeyCredParams.map {
                ASAuthorizationPublicKeyCredentialParameters(algorithm: ASCOSEAlgorithmIdentifier(rawValue: $0.alg))
            }
            key.residentKeyPreference = .required
            key.userVerificationPreference = .required
            guard case .registration(let credential) = try await AuthorizationRun(anchor: anchor).perform([platform, key]) else {
                throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "The authenticator made no passkey.")
            }
            return try await client.registerPasskey(credential, options: options, name: name)
        }

        /// Signs in with one of the passkeys the device holds for the server (usernameless).
        @discardableResult
        public func signInWithPasskey(anchor: ASPresentationAnchor, persist: Bool = true) async throws -> SignInResult {
            let options = try await client.passkeySignInOptions()
            let credential = try await assertion(options.publicKey, anchor: anchor)
            return try await client.signIn(passkey: credential, options: options, persist: persist)
        }

        /// Completes a sign-in waiting for its second factor with one of the user's passkeys.
        @discardableResult
        public func signIn(secondFactor challenge: SecondFactorChallenge, anchor: ASPresentationAnchor) async throws -> SignInResult {
            let options = try await client.passkeyOptions(for: challenge)
            let credential = try await assertion(options.publicKey, anchor: anchor)
            return try await client.signIn(secondFactor: credential, challenge: challenge)
        }

        private func assertion(
            _ options: PublicKeyCredentialRequestOptions, anchor: ASPresentationAnchor
        ) async throws
            -> AuthenticationCredential
        {
            guard let challenge = Data(base64URL: options.challenge) else {
                throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "Unreadable passkey options.")
            }
            let allowed = options.allowCredentials.compactMap { Data(base64URL: $0.id) }
            let platform = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rpId)
                .createCredentialAssertionRequest(challenge: challenge)
            platform.allowedCredentials = allowed.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
            let key = ASAuthorizationSecurityKeyPublicKeyCredentialProvider(relyingPartyIdentifier: options.rpId)
                .createCredentialAssertionRequest(challenge: challenge)
            key.allowedCredentials = allowed.map {
                ASAuthorizationSecurityKeyPublicKeyCredentialDescriptor(
                    credentialID: $0, transports: ASAuthorizationSecurityKeyPublicKeyCredentialDescriptor.Transport.allSupported)
            }
            let preference: ASAuthorizationPublicKeyCredentialUserVerificationPreference =
                options.userVerification == "required" ? .required : .discouraged
            platform.userVerificationPreference = preference
            key.userVerificationPreference = preference
            guard case .assertion(let credential) = try await AuthorizationRun(anchor: anchor).perform([platform, key]) else {
                throw GatehouseError(code: GatehouseError.invalidResponse, status: nil, message: "The authenticator signed nothing.")
            }
            return credential
        }

    }

    /// What one authorization gave, already in wire form, so only `Sendable` values leave the delegate.
    private enum AuthorizationAnswer: Sendable {
        case registration(RegistrationCredential)
        case assertion(AuthenticationCredential)
        case other

        init(_ authorization: ASAuthorization) {
            switch authorization.credential {
            case let made as ASAuthorizationPlatformPublicKeyCredentialRegistration:
                self = .registration(
                    Self.registration(
                        id: made.credentialID, clientData: made.rawClientDataJSON, attestation: made.rawAttestationObject,
                        transports: ["internal", "hybrid"], attachment: "platform"))
            case let made as ASAuthorizationSecurityKeyPublicKeyCredentialRegistration:
                self = .registration(
                    Self.registration(
                        id: made.credentialID, clientData: made.rawClientDataJSON, attestation: made.rawAttestationObject,
                        transports: ["usb", "nfc", "ble"], attachment: "cross-platform"))
            case let made as any ASAuthorizationPublicKeyCredentialAssertion:
                let id = made.credentialID.base64URL
                self = .assertion(
                    AuthenticationCredential(
                        id: id, rawId: id,
                        response: .init(
                            clientDataJSON: made.rawClientDataJSON.base64URL, authenticatorData: made.rawAuthenticatorData.base64URL,
                            signature: made.signature.base64URL, userHandle: made.userID.isEmpty ? nil : made.userID.base64URL)))
            default:
                self = .other
            }
        }

        private static func registration(
            id: Data, clientData: Data, attestation: Data?, transports: [String], attachment: String
        ) -> RegistrationCredential {
            RegistrationCredential(
                id: id.base64URL, rawId: id.base64URL,
                response: .init(
                    clientDataJSON: clientData.base64URL, attestationObject: (attestation ?? Data()).base64URL, transports: transports),
                authenticatorAttachment: attachment)
        }
    }

    /// One `ASAuthorizationController` run, its delegate callbacks turned into an `async` answer.
    @available(iOS 16.0, macOS 13.0, visionOS 1.0, *)
    @MainActor
    private final class AuthorizationRun: NSObject, ASAuthorizationControllerDelegate,
        ASAuthorizationControllerPresentationContextProviding
    {
        // Written once in `init` and only read after, by the controller on the main thread: no race.
        nonisolated(unsafe) private let anchor: ASPresentationAnchor
        private var continuation: CheckedContinuation<AuthorizationAnswer, any Error>?

        init(anchor: ASPresentationAnchor) { self.anchor = anchor }

        func perform(_ requests: [ASAuthorizationRequest]) async throws -> AuthorizationAnswer {
            try await withCheckedThrowingContinuation { continuation in
                self.continuation = continuation
                let controller = ASAuthorizationController(authorizationRequests: requests)
                controller.delegate = self
                controller.presentationContextProvider = self
                controller.performRequests()
            }
        }

        nonisolated func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor }

        nonisolated func authorizationController(
            controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
        ) {
            let answer = AuthorizationAnswer(authorization)
            MainActor.assumeIsolated {
                continuation?.resume(returning: answer)
                continuation = nil
            }
        }

        nonisolated func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
            let failure = GatehouseError(code: .accessDenied, status: nil, message: error.localizedDescription)
            MainActor.assumeIsolated {
                continuation?.resume(throwing: failure)
                continuation = nil
            }
        }
    }

    extension Data {
        fileprivate init?(base64URL text: String) {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            self.init(base64Encoded: base64)
        }

        fileprivate var base64URL: String {
            base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }
#endif
