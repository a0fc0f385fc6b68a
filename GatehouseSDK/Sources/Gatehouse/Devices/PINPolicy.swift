import Foundation
import GatehouseAPI

/// The rules a new PIN must meet, checked on the device before anything is registered. The server
/// never sees the PIN, so it cannot check it; it counts wrong answers instead.
public struct PINPolicy: Sendable, Hashable {
    /// Exact number of digits.
    public var length: Int
    /// Refuse one digit repeated (`11111`) and runs up or down (`12345`, `98765`).
    public var refusesTrivialSequences: Bool

    public init(length: Int = 5, refusesTrivialSequences: Bool = true) {
        self.length = length
        self.refusesTrivialSequences = refusesTrivialSequences
    }

    /// What is wrong with `pin`, as field errors on `pin`; valid when empty.
    public func validate(_ pin: String) -> ValidationResult {
        var result = ValidationResult()
        let digits = pin.compactMap(\.wholeNumberValue)
        guard digits.count == pin.count, pin.allSatisfy(\.isASCII) else {
            result.invalidate(field: "pin", code: .invalidFormat, message: "Use digits only.")
            return result
        }
        guard digits.count == length else {
            result.invalidate(
                field: "pin", code: digits.count < length ? .tooShort : .tooLong, message: "Use exactly \(length) digits.")
            return result
        }
        if refusesTrivialSequences, Self.isTrivial(digits) {
            result.invalidate(field: "pin", code: .invalidValue, message: "Avoid repeated digits and runs such as 12345.")
        }
        return result
    }

    static func isTrivial(_ digits: [Int]) -> Bool {
        guard digits.count > 1 else { return false }
        let steps = Set(zip(digits, digits.dropFirst()).map { ($1 - $0 + 10) % 10 })
        // One repeated step: all equal (0), counting up (1) or down (9), wrapping 9→0.
        return steps.count == 1 && [0, 1, 9].contains(steps.first!)
    }
}
