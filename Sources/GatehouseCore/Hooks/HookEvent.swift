import Foundation
import GatehouseAPI

/// The points in the flows where operator code may take part. Before-points may refuse (with the
/// same ``ValidationResult`` an app already receives) or change what the flow stores; after-points
/// only learn what happened. `password_change`, `logout`, `authenticator_removal` and `flow_complete`
/// are after-points only.
public enum HookPoint: String, Sendable, Hashable, CaseIterable, Codable {
    case signup
    case login
    case recovery
    case verification
    case tokenIssue = "token_issue"
    case profileUpdate = "profile_update"
    case passwordChange = "password_change"
    case logout
    case authenticatorRemoval = "authenticator_removal"
    /// A persisted flow begins (the hosted sign-in, a provider's web sign-in, a device challenge): a
    /// before-hook may refuse it before any page is shown or any provider asked.
    case flowStart = "flow_start"
    /// A persisted flow was used up (its code issued, its provider answer taken, its challenge answered).
    case flowComplete = "flow_complete"
    /// A second factor was confirmed, removed, or a recovery code used (after-points: webhooks only).
    case factorEnrolment = "factor_enrolment"
    case factorRemoval = "factor_removal"
    case recoveryCodeUse = "recovery_code_use"

    /// The points a before-hook can be asked at.
    public static let beforePoints: [HookPoint] = [.signup, .login, .recovery, .verification, .tokenIssue, .profileUpdate, .flowStart]

    /// The points a hook that names none is asked at: every before-point but `flow_start`, which a hook
    /// must ask for (it is asked once per sign-in page, before anyone is known).
    public static let defaultPoints: Set<HookPoint> = Set(beforePoints).subtracting([.flowStart])
}

/// What a hook sees. Only non-secret input: never a password, a code, a token or a key, by
/// construction (there is no field for one).
public struct HookEvent: Sendable, Hashable {
    public var point: HookPoint
    public var clientID: String
    /// The credential type or method in use (`password`, `email_otp`, a strategy's type, …).
    public var method: String?
    /// The normalized email, phone or other identifier the caller named.
    public var identifier: String?
    /// The user, once known (after-points always; before-points when the flow has one).
    public var userID: UUID?
    /// Profile fields the caller sent (sign-up, profile update).
    public var profile: Profile?
    /// What a custom device authenticator sent besides its signature, for the operator's check.
    public var customData: String?
    /// The granted scopes (token issue).
    public var scopes: [String]?
    public var meta: RequestMeta

    public init(
        point: HookPoint, clientID: String, method: String? = nil, identifier: String? = nil, userID: UUID? = nil,
        profile: Profile? = nil, customData: String? = nil, scopes: [String]? = nil, meta: RequestMeta
    ) {
        self.point = point
        self.clientID = clientID
        self.method = method
        self.identifier = identifier
        self.userID = userID
        self.profile = profile
        self.customData = customData
        self.scopes = scopes
        self.meta = meta
    }
}

/// What a before-hook may change when it allows: profile fields (sign-up, profile update),
/// `app_metadata` (sign-up, login, profile update) and extra access-token claims (token issue).
/// Elsewhere changes are ignored.
public struct HookChanges: Sendable, Hashable {
    public var profile: Profile?
    public var appMetadata: [String: JSONValue]?
    public var claims: [String: JSONValue]

    public init(profile: Profile? = nil, appMetadata: [String: JSONValue]? = nil, claims: [String: JSONValue] = [:]) {
        self.profile = profile
        self.appMetadata = appMetadata
        self.claims = claims
    }

    public var isEmpty: Bool { profile == nil && appMetadata == nil && claims.isEmpty }

    /// Later hooks win, field by field.
    mutating func merge(_ later: HookChanges) {
        if let profile = later.profile {
            if self.profile == nil { self.profile = Profile() }
            self.profile?.merge(profile)
        }
        if let metadata = later.appMetadata { appMetadata = (appMetadata ?? [:]).merging(metadata) { $1 } }
        claims.merge(later.claims) { $1 }
    }
}
