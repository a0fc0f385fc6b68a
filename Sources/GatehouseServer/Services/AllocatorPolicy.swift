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
/// The other half is ``trim()``: memory a request freed inside an arena stays resident there, and
/// which pages hold the few live blocks shifts with the load, so the arenas' resident size creeps up
/// long after the live heap has stopped growing. heaptrack on a soaking server (issue 35) counted
/// 38 million allocations in 7.5 minutes and 96 KiB of them still live at the end, while RSS rose
/// 2 MiB; one `malloc_trim(0)` gave 1.6 MiB of it back. ``MemoryTrimService`` calls it every minute.
///
/// `mallopt` and `malloc_trim` live in `<malloc.h>`, which the Swift Glibc module does not export, so
/// they are looked up by name; `M_MMAP_THRESHOLD` is -3 in every glibc (malloc.h).
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

    /// Hands the whole free pages inside every arena back to the system (`madvise(MADV_DONTNEED)`;
    /// the arenas keep their address space). True when glibc released any; false where there is no
    /// glibc.
    @discardableResult
    public static func trim() -> Bool {
        #if canImport(Glibc)
            typealias MallocTrim = @convention(c) (Int) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return false }
            return unsafeBitCast(symbol, to: MallocTrim.self)(0) == 1
        #else
            return false
        #endif
    }
}
