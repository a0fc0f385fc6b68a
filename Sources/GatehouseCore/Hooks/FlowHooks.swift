import Foundation
import GatehouseAPI

/// The points in the flows where operator code may take part. Before-points may refuse (with the
/// same ``ValidationResult`` an app already receives); after-points only learn what happened.
public enum HookPoint: String, Sendable, Hashable, CaseIterable, Codable {
    case signup
    case login
    case recovery
    case verification
    case tokenIssue = "token_issue"
    case profileUpdate = "profile_update"
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
    public var meta: RequestMeta

    public init(
        point: HookPoint, clientID: String, method: String? = nil, identifier: String? = nil, userID: UUID? = nil,
        profile: Profile? = nil, customData: String? = nil, meta: RequestMeta
    ) {
        self.point = point
        self.clientID = clientID
        self.method = method
        self.identifier = identifier
        self.userID = userID
        self.profile = profile
        self.customData = customData
        self.meta = meta
    }
}

/// A before-hook's answer.
public enum HookVerdict: Sendable, Equatable {
    case allow
    /// Refused; the caller gets a 422 with these field errors.
    case deny(ValidationResult)
}

/// Operator code at the hook points (a validation endpoint, a webhook sender, a test's recorder).
public protocol FlowHook: Sendable {
    func before(_ event: HookEvent) async throws -> HookVerdict
    func after(_ event: HookEvent) async
}

extension FlowHook {
    public func before(_ event: HookEvent) async throws -> HookVerdict { .allow }
    public func after(_ event: HookEvent) async {}
}

/// The hooks a server runs, in order. Empty by default: the flows pass through every point anyway,
/// so plugging hooks in changes no flow.
public struct FlowHooks: Sendable {
    public let hooks: [any FlowHook]

    public init(_ hooks: [any FlowHook] = []) { self.hooks = hooks }

    /// Runs every before-hook; the first refusal ends the flow with a 422.
    public func before(_ event: HookEvent) async throws {
        for hook in hooks {
            if case .deny(let result) = try await hook.before(event) {
                throw GatehouseError.validation(result)
            }
        }
    }

    /// Runs every after-hook. They cannot undo what was committed, so they cannot fail the flow.
    public func after(_ event: HookEvent) async {
        for hook in hooks { await hook.after(event) }
    }
}
