import Argon2

extension Argon2Parameters {
    /// Whether a stored hash of these parameters costs at most `factor` times the larger of `policy`
    /// and OWASP's minimum, in memory and in memory × passes, on at most 16 lanes: a stored hash is
    /// data, and an imported or planted one must not make a sign-in take minutes.
    func isAffordable(policy: Argon2Parameters, factor: UInt64 = 4) -> Bool {
        let floor = Argon2Parameters.owaspDefault
        let budgetMemory = UInt64(max(policy.memoryKiB, floor.memoryKiB)) * factor
        let budgetWork =
            max(UInt64(policy.memoryKiB) * UInt64(policy.iterations), UInt64(floor.memoryKiB) * UInt64(floor.iterations)) * factor
        return UInt64(memoryKiB) <= budgetMemory && UInt64(memoryKiB) * UInt64(iterations) <= budgetWork && parallelism <= 16
    }
}
