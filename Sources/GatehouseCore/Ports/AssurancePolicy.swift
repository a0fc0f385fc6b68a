import Foundation

/// What a sign-in must reach before a session starts, and which factors may raise it there.
public struct AssuranceRequirement: Sendable, Hashable {
    public var level: AssuranceLevel
    /// Ids of the ``SecondFactor``s that may complete a sign-in that falls short.
    public var factors: [String]
    /// The user has no factor yet: `factors` are the kinds they may enrol, and enrolling one (confirmed
    /// by its first code) completes the sign-in.
    public var enrol: Bool

    public init(level: AssuranceLevel, factors: [String] = [], enrol: Bool = false) {
        self.level = level
        self.factors = factors
        self.enrol = enrol
    }

    public static let firstFactor = AssuranceRequirement(level: .firstFactor)
}

/// Decides the level a sign-in must reach, from the client's policy, the user's enrolled factors and
/// what the request `asked` for (an OpenID client's `acr_values`); `amr` is what the sign-in proved so
/// far (a factor on the first factor's channel is not offered). Asked once per session start,
/// inside its transaction, so it may read the user's factors.
public protocol AssurancePolicy: Sendable {
    func requirement(
        userID: UUID, amr: [String], client: ClientRecord, asked: AssuranceLevel, stores: any Stores
    ) async throws
        -> AssuranceRequirement
}

/// Until factors exist, every sign-in's first factor suffices; it reads nothing, so the sign-in paths
/// pay nothing for the gate.
public struct FirstFactorSuffices: AssurancePolicy {
    public init() {}

    public func requirement(
        userID: UUID, amr: [String], client: ClientRecord, asked: AssuranceLevel, stores: any Stores
    ) async throws
        -> AssuranceRequirement
    {
        .firstFactor
    }
}
