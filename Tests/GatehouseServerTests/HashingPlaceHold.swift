import GatehouseCore

extension PasswordHasher {
    /// Runs `body` while the hashing pool's place is held, as a sign-in in progress holds it, and
    /// frees it after. Tests hold it on purpose rather than race requests for it: on a loaded
    /// machine racing requests may reach the pool one after another, each finding it free.
    func whilePlaceHeld<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let (taken, tookPlace) = AsyncStream<Void>.makeStream()
        let (freed, freePlace) = AsyncStream<Void>.makeStream()
        async let holder: Void = withPlace {
            tookPlace.yield()
            for await _ in freed { break }
        }
        for await _ in taken { break }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        freePlace.yield()
        try await holder
        return try result.get()
    }
}
