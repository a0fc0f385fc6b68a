import Foundation

/// Persisted flows. Finishing one is atomic: exactly one caller gets the record.
public protocol FlowStore: Sendable {
    func insert(_ flow: FlowRecord) async throws
    func find(id: UUID) async throws -> FlowRecord?
    /// Moves an open flow from `step` to `next` (with the user and data known by then); returns false
    /// when the flow is not open or no longer at `step` (someone else moved it).
    func advance(id: UUID, from step: FlowStep, to next: FlowStep, userID: UUID?, data: String?, at: Date) async throws -> Bool
    /// Marks the flow finished if it is still open at `at`; returns the record only to the caller that did.
    func consume(id: UUID, at: Date) async throws -> FlowRecord?
}
