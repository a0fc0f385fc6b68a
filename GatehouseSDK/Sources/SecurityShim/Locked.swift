import Foundation

/// A value behind an `NSLock`. `@unchecked Sendable` is sound: `value` is only read or written inside
/// `withLock`, under the lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
