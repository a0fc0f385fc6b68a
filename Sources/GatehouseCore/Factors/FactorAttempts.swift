import Foundation

/// The count of factor answers per account, shared by a waiting sign-in's answers and an enrolment's
/// confirmation, so that neither path gives a guesser a second budget.
public enum FactorAttempts {
    /// Answers an account takes in `window`, over all its waiting sign-ins and enrolments, before 429.
    public static let maxPerAccount = 10
    public static let window: TimeInterval = 15 * 60

    static func key(_ userID: UUID) -> String { "second-factor:user:" + userID.uuidString.lowercased() }
}
