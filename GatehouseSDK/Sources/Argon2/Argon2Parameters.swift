/// The cost parameters of an Argon2id hash.
///
/// These three numbers are what a stored PHC string records, so comparing them
/// with the server's current policy tells whether a stored hash should be
/// upgraded (see ``Argon2PHC/needsRehash(comparedTo:)``).
public struct Argon2Parameters: Sendable, Equatable, Hashable {
    /// Memory cost `m` in KiB (1 KiB = one 1024-byte Argon2 block).
    ///
    /// RFC 9106 requires at least `8 * parallelism`. The implementation rounds
    /// it down to a multiple of `4 * parallelism`, exactly like the reference
    /// implementation, so that results stay interoperable.
    public var memoryKiB: UInt32

    /// Time cost `t`: the number of passes over memory (at least 1).
    public var iterations: UInt32

    /// Degree of parallelism `p`: the number of lanes (1 through 2^24 - 1).
    ///
    /// This implementation computes lanes one after another on the calling
    /// thread, so `p > 1` changes the result (as the RFC requires) but not the
    /// wall-clock time in our favour. The server uses `p = 1`.
    public var parallelism: UInt32

    /// Creates a parameter set. Validation happens when hashing, so that
    /// an invalid set is reported as a thrown ``Argon2Error`` at the point of use.
    public init(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
    }

    /// OWASP's recommended minimum for Argon2id: 19 MiB of memory, 2 passes, 1 lane.
    ///
    /// See the OWASP Password Storage Cheat Sheet. This is the server's default
    /// policy: it keeps a login under a few tens of milliseconds while making
    /// GPU/ASIC guessing memory-bound.
    public static let owaspDefault = Argon2Parameters(memoryKiB: 19_456, iterations: 2, parallelism: 1)
}
