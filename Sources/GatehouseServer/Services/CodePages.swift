import CCodePages

#if canImport(Glibc)
    import Glibc
#endif

/// The code and read-only data pages a server process keeps mapped.
///
/// Start-up runs code once (configuration, migrations, the router's set-up) and the kernel maps the
/// pages around every page it touches, so a server that has just become ready holds about 48 MiB of
/// its binary and libraries in its RSS, against 9 MiB of memory of its own. ``release()`` unmaps the
/// clean ones; they stay in the page cache, and those the server goes on to use fault back in. See
/// `CCodePages` for why it cannot unmap a page anybody wrote to.
public enum CodePages {
    /// What one release did, in pages.
    public struct Release: Sendable {
        /// Clean file pages unmapped.
        public let released: Int
        /// Private copies left mapped.
        public let kept: Int
    }

    /// Unmaps the clean pages of the loaded objects' read-only segments. Nil where the page map
    /// cannot be read or on a system other than Linux; nothing is released then.
    @discardableResult
    public static func release() -> Release? {
        var result = gatehouse_code_pages_result()
        guard gatehouse_release_code_pages(&result) == 0 else { return nil }
        return Release(released: result.released, kept: result.kept)
    }

    /// The rule ``release()`` applies to each segment, for one page-aligned range of this process:
    /// every page but a private copy is unmapped. Nil where the page map cannot be read.
    public static func releaseClean(_ start: UnsafeMutableRawPointer, length: Int) -> Release? {
        #if os(Linux)
            let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
            guard pagemap >= 0 else { return nil }
            defer { close(pagemap) }
            var result = gatehouse_code_pages_result()
            guard gatehouse_release_clean_pages(start, length, pagemap, &result) == 0 else { return nil }
            return Release(released: result.released, kept: result.kept)
        #else
            return nil
        #endif
    }
}
