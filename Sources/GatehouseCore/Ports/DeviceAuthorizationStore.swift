import Foundation

/// Device authorizations (RFC 8628).
public protocol DeviceAuthorizationStore: Sendable {
    func insert(_ record: DeviceAuthorizationRecord) async throws
    func find(deviceCodeHash: String) async throws -> DeviceAuthorizationRecord?
    func find(userCodeHash: String) async throws -> DeviceAuthorizationRecord?
    /// Records a poll: its time, and the interval (grown by a `slow_down`).
    func polled(deviceCodeHash: String, at: Date, interval: Int) async throws
    /// Approves or denies a pending authorization; false when it is no longer pending.
    func decide(userCodeHash: String, status: DeviceAuthorizationRecord.Status, sealedCode: String?) async throws -> Bool
    /// Removes it once its token was issued, or its refusal told: the device code works once.
    func delete(deviceCodeHash: String) async throws -> Bool
}
