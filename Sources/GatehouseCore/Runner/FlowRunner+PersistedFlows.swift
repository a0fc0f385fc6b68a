import Foundation
import GatehouseAPI

/// The life of a persisted flow (the hosted sign-in, a provider's web sign-in, a device challenge):
/// begun behind the `flow_start` hook point, bound to the browser or app that began it (only the
/// binding's hash is stored, compared in constant time), moved from one step to the next by exactly
/// one caller, and used up once, which the `flow_complete` hook point reports. Flows do not touch the
/// flow store themselves.
extension FlowRunner {
    /// A flow just begun, with the value that binds it to its browser or app (a CSRF token, a cookie).
    public struct Begun: Sendable {
        public var flow: FlowRecord
        public var csrfToken: String
    }

    /// Starts a persisted flow for `client`, after the `flow_start` before-hook allowed it. `binding`:
    /// the caller's own binding value (a browser's flow cookie), or nil for a fresh CSRF token.
    /// `redirectURI` must be one the client registered, or a page of this server (a path).
    public func begin(
        _ kind: FlowKind, client: ClientRecord, step: FlowStep = .started, userID: UUID? = nil, browserSessionID: UUID? = nil,
        redirectURI: String? = nil, pkce: PKCEChallenge? = nil, nonce: String? = nil, state: String? = nil, data: String? = nil,
        binding: String? = nil, lifetime: TimeInterval? = nil, meta: RequestMeta
    ) async throws -> Begun {
        if let redirectURI, !client.redirectURIs.contains(redirectURI), !(redirectURI.hasPrefix("/") && !redirectURI.hasPrefix("//")) {
            throw GatehouseError.validation(
                field: "redirect_uri", code: .invalidValue, message: "redirect_uri is not registered for this client.")
        }
        try await services.hooks.before(
            HookEvent(point: .flowStart, clientID: client.id, method: kind.rawValue, userID: userID, meta: meta))
        let now = services.clock.now()
        let csrf = binding ?? Secrets.token(prefix: "gh_csrf_")
        let flow = FlowRecord(
            kind: kind, clientID: client.id, redirectURI: redirectURI, pkce: pkce, nonce: nonce, state: state,
            csrfHash: Secrets.sha256Hex(csrf), step: step, userID: userID, browserSessionID: browserSessionID, data: data,
            createdAt: now, expiresAt: now.addingTimeInterval(lifetime ?? services.settings.flowLifetime))
        try await services.persistence.transaction { try await $0.flows.insert(flow) }
        return Begun(flow: flow, csrfToken: csrf)
    }

    /// The open flow `id` of `kind`, for a caller that holds no binding: a flow whose id is itself the
    /// secret (a sign-in waiting for its second factor), or a cross-site post that only records.
    public func find(_ id: UUID, kind: FlowKind) async throws -> FlowRecord {
        let now = services.clock.now()
        guard let flow = try await services.persistence.read({ try await $0.flows.find(id: id) }), flow.kind == kind,
            flow.isOpen(at: now)
        else { throw GatehouseError.flowExpired }
        return flow
    }

    /// The open flow `id` of `kind`, once `binding` (the form's CSRF token, the browser's cookie)
    /// matches, and at `step` when one is named.
    public func load(_ id: UUID, kind: FlowKind, binding: String, step: FlowStep? = nil) async throws -> FlowRecord {
        let flow = try await find(id, kind: kind)
        guard Secrets.constantTimeEquals(Secrets.sha256Hex(binding), flow.csrfHash) else { throw GatehouseError.csrfMismatch }
        if let step, flow.step != step { throw GatehouseError.flowExpired }
        return flow
    }

    /// Moves the flow to its next step; only one caller moves it from a given step.
    public func advance(_ flow: FlowRecord, to next: FlowStep, userID: UUID? = nil, data: String? = nil) async throws -> FlowRecord {
        let now = services.clock.now()
        let moved = try await services.persistence.transaction {
            try await $0.flows.advance(id: flow.id, from: flow.step, to: next, userID: userID, data: data, at: now)
        }
        guard moved else { throw GatehouseError.flowExpired }
        var advanced = flow
        advanced.step = next
        advanced.userID = userID ?? flow.userID
        advanced.data = data ?? flow.data
        advanced.updatedAt = now
        return advanced
    }

    /// Finishes the flow: exactly one caller gets the record; everyone else, and everyone after the
    /// expiry, gets ``GatehouseError/flowExpired``.
    public func complete(_ id: UUID, meta: RequestMeta = RequestMeta()) async throws -> FlowRecord {
        try await complete(id, meta: meta) { flow, _ in flow }
    }

    /// Finishes the flow in the transaction of `work` (the code it issues, the session it starts): both
    /// happen, or neither.
    public func complete<T: Sendable>(
        _ id: UUID, meta: RequestMeta = RequestMeta(), _ work: @escaping @Sendable (FlowRecord, any Stores) async throws -> T
    ) async throws -> T {
        let now = services.clock.now()
        let (flow, result) = try await services.persistence.transaction { stores -> (FlowRecord, T) in
            guard let flow = try await stores.flows.consume(id: id, at: now) else { throw GatehouseError.flowExpired }
            return (flow, try await work(flow, stores))
        }
        await services.hooks.after(
            HookEvent(point: .flowComplete, clientID: flow.clientID, method: flow.kind.rawValue, userID: flow.userID, meta: meta))
        return result
    }
}
