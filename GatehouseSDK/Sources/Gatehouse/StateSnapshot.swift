import Foundation

/// The client's state and session as of the last change, readable without `await`.
///
/// The actor writes it whenever its own copy changes; readers on any thread get a consistent pair.
/// `@unchecked Sendable` is sound: the only stored properties are a lock (`NSLock` is thread-safe)
/// and a value that is read and written only while that lock is held. `Mutex` would say so to the
/// compiler, but needs iOS 18 / macOS 15 and the SDK supports iOS 15 / macOS 14.
final class StateSnapshot: @unchecked Sendable {
    struct Value: Sendable {
        var state: AuthState = .restoring
        var session: StoredSession?
        weak var delegate: (any AuthClientDelegate)?
    }

    private let lock = NSLock()
    private var value = Value()

    func read<T>(_ body: (Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(value)
    }

    func write(_ body: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body(&value)
    }
}
