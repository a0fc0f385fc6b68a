#ifndef GATEHOUSE_CODE_PAGES_H
#define GATEHOUSE_CODE_PAGES_H

#include <stddef.h>

/// What a release did, in pages.
typedef struct {
    /// Clean file pages unmapped from this process (they stay in the page cache).
    size_t released;
    /// Pages left mapped because they are private copies (written, or in swap): dropping those would
    /// lose what was written to them.
    size_t kept;
} gatehouse_code_pages_result;

/// Unmaps the clean file pages of the read-only and executable segments of every object the dynamic
/// loader has loaded (the program and its shared libraries). A page touched later faults back in
/// from the page cache. Returns 0, or -1 when /proc/self/pagemap cannot be read (nothing is released
/// then) or on a system other than Linux.
int gatehouse_release_code_pages(gatehouse_code_pages_result *result);

/// The rule for one page-aligned range: every page that is not a private copy is unmapped
/// (madvise MADV_DONTNEED), a private copy is kept. `pagemap` is an open /proc/self/pagemap. Adds to
/// `result`. Returns 0, or -1 when the page map cannot be read (nothing more is released then).
int gatehouse_release_clean_pages(void *start, size_t length, int pagemap, gatehouse_code_pages_result *result);

#endif
