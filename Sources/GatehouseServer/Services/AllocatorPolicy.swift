#if canImport(Glibc)
    import Glibc
#endif

/// How a server process asks glibc's allocator to give memory back.
///
/// glibc raises its mmap threshold to the size of the largest block freed so far (up to 32 MiB), so
/// once the first Argon2id block (19 MiB at the default cost) has been freed, every later one comes
/// from a malloc arena instead of its own mapping, and stays in that arena when freed. Each arena a
/// hashing thread happens to use keeps one: the soak of issue 35 saw RSS climb in steps of about
/// 19 MiB (minutes 8, 21, 33) with a creep between. A fixed threshold switches that adjustment off:
/// blocks of 1 MiB and more are mapped and unmapped on their own, so a hash's memory goes back to the
/// system when it is done, and RSS after a login flood returns to what the rest of the server holds.
/// Smaller allocations (every request's) are unchanged.
///
/// `mallopt` lives in `<malloc.h>`, which the Swift Glibc module does not export, so it is looked up
/// by name; `M_MMAP_THRESHOLD` is -3 in every glibc (malloc.h).
public enum AllocatorPolicy {
    @discardableResult
    public static func apply() -> Bool {
        #if canImport(Glibc)
            typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
            let mallopt = unsafeBitCast(symbol, to: MallOpt.self)
            return mallopt(-3, 1 << 20) == 1
        #else
            return false
        #endif
    }
}
