#ifdef __linux__
#define _GNU_SOURCE
#endif
#include "CCodePages.h"

// Written by hand: no listed package walks the loaded objects' segments, and Swift's Glibc module
// does not export <link.h> (dl_iterate_phdr) or the page map's layout.
//
// Why: the kernel maps a file's pages around each page a process faults in (fault-around), so the
// start-up of a large Swift binary leaves most of its code and metadata resident in its RSS — about
// 48 MiB of a 57 MiB idle server, against 9 MiB of memory of its own. Unmapping them once the server
// is up leaves only the pages it goes on to use.
//
// Why it is safe: only the loader's own mappings of segments without write permission are walked
// (dl_iterate_phdr); such a mapping goes away only by dlclose, which nothing in the server calls (the
// one in the packages it links is SQLite's, for extensions it never loads), so no address is
// unmapped and reused for something else between the walk and the madvise.
// madvise(MADV_DONTNEED) on a private file mapping makes the next access read the page from the file
// again; that is only the page's content if nobody wrote to it, so the page map is read first and a
// private copy (a page written after a temporary mprotect, a debugger's breakpoint, a page in swap)
// is kept as it is.

#ifdef __linux__

#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// /proc/PID/pagemap, one 64-bit entry per page (Documentation/admin-guide/mm/pagemap.rst).
#define PAGE_PRESENT (1ULL << 63)
#define PAGE_SWAPPED (1ULL << 62)
#define PAGE_FILE_OR_SHARED (1ULL << 61)

static int is_private_copy(uint64_t entry) {
    if (entry & PAGE_SWAPPED) return 1;
    return (entry & PAGE_PRESENT) && !(entry & PAGE_FILE_OR_SHARED);
}

int gatehouse_release_clean_pages(void *start, size_t length, int pagemap, gatehouse_code_pages_result *result) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t address = (uintptr_t)start;
    const uintptr_t end = address + length;
    uint64_t entries[512];
    while (address < end) {
        size_t count = (end - address) / page;
        if (count > 512) count = 512;
        ssize_t got = pread(pagemap, entries, count * sizeof(uint64_t), (off_t)(address / page * sizeof(uint64_t)));
        if (got != (ssize_t)(count * sizeof(uint64_t))) return -1;
        size_t run = 0;  // the first page of the current run of pages to drop
        for (size_t i = 0; i <= count; i++) {
            int keep = i == count || is_private_copy(entries[i]);
            if (i < count) {
                if (keep) result->kept++;
                else if (entries[i] & PAGE_PRESENT) result->released++;
            }
            if (keep) {
                if (i > run) madvise((void *)(address + run * page), (i - run) * page, MADV_DONTNEED);
                run = i + 1;
            }
        }
        address += count * page;
    }
    return 0;
}

typedef struct {
    int pagemap;
    int failed;
    gatehouse_code_pages_result *result;
} walk;

static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    walk *w = data;
    // The vDSO is the kernel's, not a file.
    if (info->dlpi_name && strncmp(info->dlpi_name, "linux-", 6) == 0) return 0;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W) || segment->p_memsz == 0) continue;
        uintptr_t first = (info->dlpi_addr + segment->p_vaddr) & ~(page - 1);
        uintptr_t last = (info->dlpi_addr + segment->p_vaddr + segment->p_memsz + page - 1) & ~(page - 1);
        if (gatehouse_release_clean_pages((void *)first, last - first, w->pagemap, w->result) != 0) {
            w->failed = 1;
            return 1;
        }
    }
    return 0;
}

int gatehouse_release_code_pages(gatehouse_code_pages_result *result) {
    result->released = 0;
    result->kept = 0;
    int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap < 0) return -1;
    walk w = {pagemap, 0, result};
    dl_iterate_phdr(release_object, &w);
    close(pagemap);
    return w.failed ? -1 : 0;
}

#else

int gatehouse_release_clean_pages(void *start, size_t length, int pagemap, gatehouse_code_pages_result *result) {
    (void)start;
    (void)length;
    (void)pagemap;
    (void)result;
    return -1;
}

int gatehouse_release_code_pages(gatehouse_code_pages_result *result) {
    result->released = 0;
    result->kept = 0;
    return -1;
}

#endif
