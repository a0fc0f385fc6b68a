import Testing
import Argon2

/// RFC 9106 section 3.1 input limits, plus the module's memory cap, must be
/// reported as thrown errors (never traps and never huge allocations).
@Suite("Input validation")
struct Argon2ValidationTests {
    let salt = [UInt8](repeating: 7, count: 16)
    let ok = Argon2Parameters(memoryKiB: 32, iterations: 1, parallelism: 1)

    @Test("Salt shorter than 8 bytes")
    func shortSalt() {
        #expect(throws: Argon2Error.invalidSaltLength(7)) {
            try Argon2.hash(password: [], salt: [UInt8](repeating: 0, count: 7), parameters: ok)
        }
        #expect(throws: Argon2Error.invalidSaltLength(0)) {
            try Argon2.hash(password: [], salt: [], parameters: ok)
        }
        #expect(throws: Argon2Error.self) {
            try Argon2.hashPHC(password: "pw", parameters: ok, salt: [1, 2, 3])
        }
    }

    @Test("Minimum sizes are accepted: 8-byte salt, 4-byte tag, m = 8p, empty password")
    func minimums() throws {
        let tag = try Argon2.hash(
            password: [], salt: [UInt8](repeating: 0, count: 8),
            parameters: Argon2Parameters(memoryKiB: 16, iterations: 1, parallelism: 2), tagLength: 4)
        #expect(tag.count == 4)
    }

    @Test("Tag length outside 4...2^32-1", arguments: [-1, 0, 3])
    func badTagLength(length: Int) {
        #expect(throws: Argon2Error.invalidTagLength(length)) {
            try Argon2.hash(password: [], salt: salt, parameters: ok, tagLength: length)
        }
    }

    @Test("Zero iterations")
    func zeroIterations() {
        #expect(throws: Argon2Error.invalidIterations(0)) {
            try Argon2.hash(password: [], salt: salt, parameters: Argon2Parameters(memoryKiB: 32, iterations: 0, parallelism: 1))
        }
    }

    @Test("Parallelism outside 1...2^24-1", arguments: [UInt32(0), 1 << 24, UInt32.max])
    func badParallelism(p: UInt32) {
        #expect(throws: Argon2Error.invalidParallelism(p)) {
            try Argon2.hash(password: [], salt: salt, parameters: Argon2Parameters(memoryKiB: UInt32.max, iterations: 1, parallelism: p))
        }
    }

    @Test("Memory below 8p")
    func memoryTooSmall() {
        #expect(throws: Argon2Error.memoryTooSmall(memoryKiB: 7, minimum: 8)) {
            try Argon2.hash(password: [], salt: salt, parameters: Argon2Parameters(memoryKiB: 7, iterations: 1, parallelism: 1))
        }
        #expect(throws: Argon2Error.memoryTooSmall(memoryKiB: 31, minimum: 32)) {
            try Argon2.hash(password: [], salt: salt, parameters: Argon2Parameters(memoryKiB: 31, iterations: 1, parallelism: 4))
        }
    }

    @Test("Memory above the 4 GiB cap is refused before allocating")
    func memoryCap() {
        #expect(Argon2.maximumMemoryKiB == 4 * 1024 * 1024)
        #expect(throws: Argon2Error.memoryTooLarge(memoryKiB: UInt32.max, maximum: Argon2.maximumMemoryKiB)) {
            try Argon2.hash(password: [], salt: salt, parameters: Argon2Parameters(memoryKiB: UInt32.max, iterations: 1, parallelism: 1))
        }
    }

    @Test("Errors describe themselves for logs")
    func descriptions() {
        #expect(String(describing: Argon2Error.memoryTooLarge(memoryKiB: 5, maximum: 4)).contains("cap"))
    }
}
