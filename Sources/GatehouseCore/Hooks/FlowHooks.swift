import Foundation
import GatehouseAPI
import Logging

/// A before-hook's answer.
public enum HookVerdict: Sendable, Equatable {
    case allow
    /// Allowed, with changes to what the flow stores or issues.
    case change(HookChanges)
    /// Refused; the caller gets a 422 with these field errors.
    case deny(ValidationResult)
}

/// Operator code at the hook points (a validation endpoint, a test's recorder).
public protocol FlowHook: Sendable {
    func before(_ event: HookEvent) async throws -> HookVerdict
    func after(_ event: HookEvent) async
}

extension FlowHook {
    public func before(_ event: HookEvent) async throws -> HookVerdict { .allow }
    public func after(_ event: HookEvent) async {}
}

/// The hooks a server runs, in order, and the webhook subscriptions. Empty by default: the flows pass
/// through every point anyway, so plugging hooks in changes no flow.
public struct FlowHooks: Sendable {
    public let hooks: [any FlowHook]
    /// Webhooks are written to the outbox in the transaction of the change they report, so an event
    /// is never lost between a commit and a crash.
    public let webhooks: WebhookOutbox?

    public init(_ hooks: [any FlowHook] = [], webhooks: WebhookOutbox? = nil) {
        self.hooks = hooks
        self.webhooks = webhooks
    }

    /// Whether any before-hook is configured (token issue skips building its event otherwise).
    public var hasBeforeHooks: Bool { !hooks.isEmpty }

    /// Runs every before-hook; the first refusal ends the flow with a 422. Returns the changes the
    /// hooks asked for, merged in order.
    @discardableResult
    public func before(_ event: HookEvent) async throws -> HookChanges {
        var changes = HookChanges()
        for hook in hooks {
            switch try await hook.before(event) {
            case .allow: break
            case .change(let more): changes.merge(more)
            case .deny(let result): throw GatehouseError.validation(result)
            }
        }
        return changes
    }

    /// Runs every after-hook. They cannot undo what was committed, so they cannot fail the flow.
    public func after(_ event: HookEvent) async {
        for hook in hooks { await hook.after(event) }
    }
}
