import Synchronization

/// Hands each read to a reader connection no other read is using. Statements run on a thread pool, so
/// two reads sent to one connection could overlap, and an overlapping statement shares the read
/// transaction of the one already running: it sees that one's older snapshot. Under load that
/// made a refresh token committed a moment earlier look unknown ("The refresh token is not valid", a few
/// in 25,000 refreshes, only on SQLite). One read per connection at a time keeps every read as fresh as
/// its start. (No listed package offers an async pool over sqlite-nio connections.)
final class SQLiteReaderPool: Sendable {
    private struct State {
        var idle: [CachingSQLiteConnection]
        var waiters: [CheckedContinuation<CachingSQLiteConnection, Never>] = []
        var head = 0
    }

    private let state: Mutex<State>
    let all: [CachingSQLiteConnection]

    init(_ connections: [CachingSQLiteConnection]) {
        precondition(!connections.isEmpty, "a reader pool needs a connection")
        self.all = connections
        self.state = Mutex(State(idle: connections))
    }

    func withConnection<R: Sendable>(_ body: (CachingSQLiteConnection) async throws -> R) async throws -> R {
        let connection = await acquire()
        defer { release(connection) }
        return try await body(connection)
    }

    private func acquire() async -> CachingSQLiteConnection {
        if let ready = state.withLock({ $0.idle.popLast() }) { return ready }
        return await withCheckedContinuation { continuation in
            let ready: CachingSQLiteConnection? = state.withLock { state in
                if let ready = state.idle.popLast() { return ready }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func release(_ connection: CachingSQLiteConnection) {
        let waiter: CheckedContinuation<CachingSQLiteConnection, Never>? = state.withLock { state in
            guard state.head < state.waiters.count else {
                state.idle.append(connection)
                return nil
            }
            let next = state.waiters[state.head]
            state.head += 1
            if state.head > 64, state.head * 2 > state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return next
        }
        // The connection passes straight to the longest waiter.
        waiter?.resume(returning: connection)
    }
}
