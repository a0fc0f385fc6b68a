extension Argon2 {
    /// Block memory kept from one hash to the next, for a thread that hashes again and again (a
    /// server's hashing threads). Without one, each hash allocates its memory (19 MiB at OWASP's
    /// cost) and frees it; when the allocator maps such a block fresh every time, the kernel
    /// zero-fills each of its pages on first touch, which costs as much as a third of a hash. A
    /// workspace keeps the block mapped and only grows it; it is still wiped after every hash.
    ///
    /// A workspace serves one hash at a time. It is `Sendable` so that a pool can hand it from thread
    /// to thread: it has no state besides its buffer, and the buffer is touched only by the hash that
    /// holds the workspace, whose caller must not start a second hash with it before the first
    /// returns (the server's `HashingPool` takes one per job under its lock and puts it back after).
    public final class Workspace: @unchecked Sendable {
        private var memory: UnsafeMutablePointer<UInt64>?
        private var words = 0

        public init() {}

        deinit { release() }

        /// Bytes held now (0 after ``release()``).
        public var retainedBytes: Int { words * 8 }

        /// Gives the memory back to the system; the next hash allocates again.
        public func release() {
            memory?.deallocate()
            memory = nil
            words = 0
        }

        /// At least `count` words; the contents are whatever the last hash left wiped (zeros) or fresh.
        func buffer(words count: Int) -> UnsafeMutablePointer<UInt64> {
            if let memory, words >= count { return memory }
            release()
            let fresh = UnsafeMutablePointer<UInt64>.allocate(capacity: count)
            memory = fresh
            words = count
            return fresh
        }
    }
}
