import Foundation

/// Applies `KEY=VALUE` settings from the CLI, rejecting unknown keys and bad values.
public enum ClientSettingsParser {
    public static let keys = [
        "email_verification", "enumeration_protection", "identifier_status", "recovery_unknown_notice", "methods", "required_fields",
        "terms_platform_version", "terms_platform_url", "terms_client_version", "terms_client_url",
        "access_token_ttl", "refresh_token_ttl", "device_authenticators", "max_failure_count", "mfa", "allowed_origins", "audiences",
        "metadata_schema", "social_providers",
        "third_party", "post_logout_redirect_uris", "logo_url", "brand_color",
        "id_token_signed_response_alg", "access_token_signed_response_alg", "userinfo_signed_response_alg", "backchannel_logout_uri",
        "frontchannel_logout_uri",
        "jwks", "jwks_uri", "request_object_signing_alg", "require_pushed_authorization_requests", "subject_type", "sector_identifier",
        "dpop", "token_exchange", "bot_challenge", "usernames", "anonymous",
    ]

    public static func apply(_ assignments: [String], to settings: inout ClientSettings) throws {
        for assignment in assignments {
            guard let eq = assignment.firstIndex(of: "=") else {
                throw ClientAdminError.invalid("setting \(assignment) must look like KEY=VALUE")
            }
            let key = String(assignment[..<eq])
            let value = String(assignment[assignment.index(after: eq)...])
            try apply(key: key, value: value, to: &settings)
        }
    }

    static func apply(key: String, value: String, to s: inout ClientSettings) throws {
        func toggle() throws -> ClientSettings.Toggle {
            guard let t = ClientSettings.Toggle(rawValue: value) else { throw bad(key, "on or off") }
            return t
        }
        func list() -> [String] { value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        func seconds() throws -> Int {
            guard let n = Int(value), n >= 30, n <= 365 * 24 * 3600 else { throw bad(key, "seconds between 30 and 31536000") }
            return n
        }
        func url() throws -> String? {
            if value.isEmpty { return nil }
            guard let u = URL(string: value), ["https", "http"].contains(u.scheme?.lowercased() ?? "") else {
                throw bad(key, "an http(s) URL")
            }
            return value
        }
        switch key {
        case "email_verification":
            guard let v = ClientSettings.EmailVerification(rawValue: value) else { throw bad(key, "required or off") }
            s.emailVerification = v
        case "enumeration_protection": s.enumerationProtection = try toggle()
        case "identifier_status": s.identifierStatus = try toggle()
        case "recovery_unknown_notice": s.recoveryUnknownNotice = try toggle()
        case "methods":
            let allowed = ["password", "email_otp", "sms_otp", "passkey"]
            let methods = list()
            guard !methods.isEmpty, methods.allSatisfy(allowed.contains) else {
                throw bad(key, "a comma-separated subset of \(allowed.joined(separator: ","))")
            }
            s.methods = methods
        case "required_fields":
            let allowed = ["name", "given_name", "family_name", "birthdate", "picture", "locale", "phone"]
            let fields = list()
            guard fields.allSatisfy(allowed.contains) else {
                throw bad(key, "a comma-separated subset of \(allowed.joined(separator: ","))")
            }
            s.requiredFields = fields
        case "terms_platform_version": s.termsPlatformVersion = value.isEmpty ? nil : value
        case "terms_platform_url": s.termsPlatformURL = try url()
        case "terms_client_version": s.termsClientVersion = value.isEmpty ? nil : value
        case "terms_client_url": s.termsClientURL = try url()
        case "access_token_ttl": s.accessTokenTTL = try seconds()
        case "refresh_token_ttl": s.refreshTokenTTL = try seconds()
        case "device_authenticators": s.deviceAuthenticators = try toggle()
        case "mfa":
            guard let v = ClientSettings.MFA(rawValue: value) else { throw bad(key, "off, optional or required") }
            s.mfa = v
        case "allowed_origins":
            var origins: [String] = []
            for item in list() {
                guard let origin = WebOrigin.normalize(item) else {
                    throw bad(
                        key, "a comma-separated list of origins such as https://app.example.com (scheme, host, optional port; no path)")
                }
                origins.append(origin)
            }
            s.allowedOrigins = origins
        case "metadata_schema":
            if value.isEmpty {
                s.metadataSchema = nil
            } else {
                do { s.metadataSchema = try MetadataSchema(json: value).root } catch { throw bad(key, "a JSON Schema: \(error)") }
            }
        case "audiences":
            var audiences: [String] = []
            for item in list() {
                // RFC 8707 §2: an absolute URI without a fragment.
                guard let url = URLComponents(string: item), let scheme = url.scheme, ["https", "http"].contains(scheme),
                    url.host?.isEmpty == false, url.fragment == nil, item.count <= 256
                else { throw bad(key, "a comma-separated list of absolute https:// URIs such as https://api.example.com (no fragment)") }
                audiences.append(item)
            }
            s.audiences = audiences
        case "social_providers":
            // Checked against the server's providers file when a token arrives: the file may change
            // between nodes' restarts, a setting should not fail because of it.
            let ids = list()
            guard ids.allSatisfy(SocialProvider.isValidID) else {
                throw bad(key, "a comma-separated list of provider ids such as apple,google")
            }
            s.socialProviders = ids
        case "third_party": s.thirdParty = try toggle()
        case "anonymous": s.anonymous = try toggle()
        case "dpop":
            guard let mode = ClientSettings.DPoPMode(rawValue: value) else { throw bad(key, "off, allowed or required") }
            s.dpop = mode
        case "token_exchange":
            guard value == "on" || value == "off" || value == "impersonation" else { throw bad(key, "off, on or impersonation") }
            s.tokenExchange = ClientSettings.TokenExchangeMode(rawValue: value) ?? .off
        case "usernames":
            guard let v = ClientSettings.MFA(rawValue: value) else { throw bad(key, "off, optional or required") }
            s.usernames = v
        case "bot_challenge":
            let all = BotChallenge.Action.allCases.map(\.rawValue)
            let actions = value == "on" ? all : value == "off" ? [] : list()
            guard actions.allSatisfy(all.contains) else {
                throw bad(key, "on, off or a comma-separated subset of \(all.joined(separator: ","))")
            }
            s.botChallenge = all.filter(actions.contains)
        case "post_logout_redirect_uris":
            let uris = list()
            for uri in uris {
                do { try RedirectURIRule.validateRedirectURI(uri) } catch {
                    throw bad(key, "a comma-separated list of exact redirect URIs: \(error)")
                }
            }
            s.postLogoutRedirectURIs = uris
        case "logo_url":
            if value.isEmpty {
                s.logoURL = nil
            } else {
                guard value.count <= 2048, let u = URL(string: value),
                    u.scheme == "https" || (u.scheme == "http" && Loopback.contains(u.host ?? "")),
                    u.host?.isEmpty == false
                else { throw bad(key, "an https URL") }
                s.logoURL = value
            }
        case "brand_color":
            // Inserted into the pages' CSS: nothing but a hex colour may pass.
            if value.isEmpty {
                s.brandColor = nil
            } else {
                guard value.count == 7, value.first == "#", value.dropFirst().allSatisfy(\.isHexDigit) else {
                    throw bad(key, "a colour like #2754c5")
                }
                s.brandColor = value.lowercased()
            }
        case "id_token_signed_response_alg", "access_token_signed_response_alg":
            guard let algorithm = SigningAlgorithm(name: value) else { throw bad(key, "RS256 or ES256") }
            if key == "id_token_signed_response_alg" {
                s.idTokenSigningAlgorithm = algorithm
            } else {
                s.accessTokenSigningAlgorithm = algorithm
            }
        case "userinfo_signed_response_alg":
            if value == "none" || value.isEmpty {
                s.userinfoSigningAlgorithm = nil
            } else {
                guard let algorithm = SigningAlgorithm(name: value) else { throw bad(key, "none, RS256 or ES256") }
                s.userinfoSigningAlgorithm = algorithm
            }
        case "backchannel_logout_uri":
            // Logout tokens name the user's session: only over TLS, or to this machine.
            guard value.isEmpty || RedirectURIRule.isSecureWebURL(value) else {
                throw bad(key, "an https URL (http only to a loopback address)")
            }
            s.backchannelLogoutURI = value.isEmpty ? nil : value
        case "frontchannel_logout_uri":
            // Framed by the logout page, so the page's frame-src allows its origin: only TLS, or this machine.
            guard value.isEmpty || RedirectURIRule.isSecureWebURL(value) else {
                throw bad(key, "an https URL (http only to a loopback address)")
            }
            s.frontchannelLogoutURI = value.isEmpty ? nil : value
        case "jwks":
            if value.isEmpty {
                s.jwks = nil
            } else {
                do {
                    _ = try ClientKeys(json: value)
                } catch let invalid as ClientKeys.Invalid {
                    throw bad(key, invalid.description)
                }
                s.jwks = value
            }
        case "jwks_uri":
            guard value.isEmpty || RedirectURIRule.isSecureWebURL(value) else {
                throw bad(key, "an https URL (http only to a loopback address)")
            }
            s.jwksURI = value.isEmpty ? nil : value
        case "request_object_signing_alg":
            if value.isEmpty {
                s.requestObjectSigningAlgorithm = nil
            } else {
                guard let algorithm = SigningAlgorithm(name: value) else { throw bad(key, "RS256, ES256 or empty (any)") }
                s.requestObjectSigningAlgorithm = algorithm
            }
        case "require_pushed_authorization_requests": s.requirePushedAuthorizationRequests = try toggle()
        case "subject_type":
            guard let type = ClientSettings.SubjectType(rawValue: value) else { throw bad(key, "public or pairwise") }
            s.subjectType = type
        case "sector_identifier":
            // Changing it changes every pairwise subject of the client: allowed, since the operator
            // may move a sector on purpose, but never done implicitly.
            let host = value.lowercased()
            guard host.isEmpty || SubjectIdentifiers.isValidSector(host) else { throw bad(key, "a host name such as app.example.com") }
            s.sectorIdentifier = host.isEmpty ? nil : host
        case "max_failure_count":
            guard let n = Int(value), (1...10).contains(n) else { throw bad(key, "a whole number from 1 to 10") }
            s.maxFailureCount = n
        default:
            throw ClientAdminError.invalid("unknown setting \(key); known: \(keys.joined(separator: ", "))")
        }
    }

    static func bad(_ key: String, _ expected: String) -> ClientAdminError {
        .invalid("\(key) must be \(expected)")
    }
}
