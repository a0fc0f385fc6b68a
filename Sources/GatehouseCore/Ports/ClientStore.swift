import Foundation

/// Applications.
public protocol ClientStore: Sendable {
    /// Throws ``StoreError/conflict`` when the id is taken.
    func insert(_ client: ClientRecord) async throws
    func find(id: String) async throws -> ClientRecord?
    func findDefault() async throws -> ClientRecord?
    func list() async throws -> [ClientRecord]
    func update(_ client: ClientRecord) async throws
    /// Returns whether a row was deleted.
    func delete(id: String) async throws -> Bool
}
