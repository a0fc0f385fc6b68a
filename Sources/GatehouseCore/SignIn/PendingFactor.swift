import Foundation

/// A sign-in waiting for its second factor: the flow that completes it, the factors that may, and
/// whether the user must enrol one first (they have none, and the client or the request requires it).
public struct PendingFactor: Sendable, Hashable {
    public var id: UUID
    public var factors: [String]
    public var enrol: Bool

    public init(id: UUID, factors: [String], enrol: Bool = false) {
        self.id = id
        self.factors = factors
        self.enrol = enrol
    }
}
