/// A FIFO async mutex. SQLite allows one writer at a time; queueing writers here, in order, is cheaper
/// and fairer than letting them spin on SQLITE_BUSY. (No listed package offers an async mutex.)
actor AsyncLock {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var head = 0

    func lock() async {
        guard locked else {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func unlock() {
        if head < waiters.count {
            let next = waiters[head]
            head += 1
            if head > 64, head * 2 > waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
            next.resume()  // ownership passes straight to the next waiter
        } else {
            locked = false
        }
    }
}
