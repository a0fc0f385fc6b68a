import Foundation

/// A flow begun inside a transaction already under way: a sign-in that waits for its second factor,
/// whose hooks have run. Apart from ``FlowRunner`` so that the session starter, which lives inside
/// the services every flow is given, does not depend on the runner that is given them.
enum InlineFlows {
    /// No `flow_start` hook, and a binding nobody holds (the flow's id is what its owner holds).
    static func begin(
        _ kind: FlowKind, clientID: String, userID: UUID?, data: String, lifetime: TimeInterval, now: Date, stores: any Stores
    ) async throws -> UUID {
        let flow = FlowRecord(
            kind: kind, clientID: clientID, csrfHash: Secrets.sha256Hex(Secrets.token(prefix: "gh_csrf_")), userID: userID, data: data,
            createdAt: now, expiresAt: now.addingTimeInterval(lifetime))
        try await stores.flows.insert(flow)
        return flow.id
    }
}
