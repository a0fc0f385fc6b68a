import Foundation

/// A second factor: checks the user's answer to it. Counting and single use of the waiting sign-in
/// are ``SecondFactorFlow``'s, not the factor's.
public protocol SecondFactor: Sendable {
    /// The id clients name it by (`totp`, `recovery_code`, …).
    var id: String { get }
    /// What it adds to `amr` (RFC 8176).
    var amr: String { get }

    func verify(_ response: String, userID: UUID, stores: any Stores) async throws -> Bool

    /// `clientID`: the client of the waiting sign-in, for a factor whose answer was sent for it (a code
    /// by mail or text). Others need not implement it.
    func verify(_ response: String, userID: UUID, clientID: String, stores: any Stores) async throws -> Bool

    /// `flowID`: the waiting sign-in, for a factor whose challenge is that sign-in's own (a passkey).
    /// Others need not implement it.
    func verify(_ response: String, userID: UUID, clientID: String, flowID: UUID, stores: any Stores) async throws -> Bool
}

extension SecondFactor {
    public func verify(_ response: String, userID: UUID, clientID: String, stores: any Stores) async throws -> Bool {
        try await verify(response, userID: userID, stores: stores)
    }

    public func verify(_ response: String, userID: UUID, clientID: String, flowID: UUID, stores: any Stores) async throws -> Bool {
        try await verify(response, userID: userID, clientID: clientID, stores: stores)
    }
}
