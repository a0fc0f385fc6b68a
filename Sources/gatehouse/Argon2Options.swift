import Argon2
import ArgumentParser

/// Argon2id cost options, shared by `serve` and `users import` so both hash alike.
struct Argon2Options: ParsableArguments {
    @Option(name: .customLong("argon2-memory"), help: "Argon2id memory in KiB for new hashes (GATEHOUSE_ARGON2_MEMORY; default 19456)")
    var memory: UInt32?
    @Option(name: .customLong("argon2-iterations"), help: "Argon2id passes (GATEHOUSE_ARGON2_ITERATIONS; default 2)")
    var iterations: UInt32?
    @Option(name: .customLong("argon2-parallelism"), help: "Argon2id lanes (GATEHOUSE_ARGON2_PARALLELISM; default 1)")
    var parallelism: UInt32?

    func resolve(_ defaults: Argon2Parameters = .owaspDefault) throws -> Argon2Parameters {
        var p = defaults
        if let m = try number(memory, "GATEHOUSE_ARGON2_MEMORY") { p.memoryKiB = m }
        if let t = try number(iterations, "GATEHOUSE_ARGON2_ITERATIONS") { p.iterations = t }
        if let l = try number(parallelism, "GATEHOUSE_ARGON2_PARALLELISM") { p.parallelism = l }
        guard p.parallelism >= 1, p.memoryKiB >= 8 * p.parallelism, p.iterations >= 1 else {
            throw ValidationError("Argon2 parameters are out of range")
        }
        return p
    }

    private func number(_ flag: UInt32?, _ variable: String) throws -> UInt32? {
        guard let raw = Env.value(flag.map(String.init), variable) else { return nil }
        guard let value = UInt32(raw) else { throw ValidationError("\(variable) must be a whole number") }
        return value
    }
}
