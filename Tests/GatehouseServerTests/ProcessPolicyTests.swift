import Foundation
import GatehouseServer
import Logging
import Synchronization
import Testing

/// What the `serve` process sets up for itself: its text log lines and its allocator.
@Suite("Process policies")
struct ProcessPolicyTests {
    /// A metadata value that counts how often it is turned into text.
    final class Counted: CustomStringConvertible, Sendable {
        let formatted = Atomic(0)
        var description: String {
            formatted.add(1, ordering: .relaxed)
            return "r-17"
        }
    }

    @Test(
        "LOG-1: the text log handler formats metadata only for a line it writes: a request id set on every request's logger costs nothing until something is logged; lines carry level, label, sorted metadata (the event's over the logger's), source and message"
    )
    func textLinesAreFormattedLazily() throws {
        let lines = Mutex<[String]>([])
        let counted = Counted()
        var logger = Logger(label: "gatehouse") { label in
            TextLogHandler(label: label) { line in lines.withLock { $0.append(line) } }
        }
        logger.logLevel = .info
        logger[metadataKey: "request_id"] = .stringConvertible(counted)
        logger[metadataKey: "path"] = "/v1/me"
        logger.debug("below the level")
        #expect(counted.formatted.load(ordering: .relaxed) == 0)
        #expect(lines.withLock { $0.isEmpty })

        logger.info("request", metadata: ["status": "200", "path": "/v1/login"], source: "edge")
        #expect(counted.formatted.load(ordering: .relaxed) == 1)
        let line = try #require(lines.withLock { $0.first })
        #expect(line.hasSuffix(" info gatehouse: path=/v1/login request_id=r-17 status=200 [edge] request\n"))
        let year = line.prefix(4)
        #expect(year.count == 4 && Int(year) != nil)
    }

    @Test(
        "MEM-1: the allocator policy of `gatehouse serve` is in force on Linux: glibc takes the fixed mmap threshold, so a freed Argon2id block goes back to the system instead of staying in an arena"
    )
    func allocatorPolicyApplies() throws {
        #if os(Linux)
            #expect(AllocatorPolicy.apply())
            // Without the policy the first free raises glibc's threshold past the block's size, and the
            // second block comes from an arena, where it stays after its free. With it, each block is a
            // mapping of its own, which free(3) unmaps. glibc marks such a chunk in its header, the word
            // before the block (bit 1, IS_MMAPPED): read there, not from the address space after the
            // free, where another test's thread may map something new into the hole at once (a loaded
            // run saw exactly that with a mincore(2) check).
            let size = 19 << 20
            var ownMappings: [Bool] = []
            for _ in 0..<2 {
                let block = try #require(malloc(size))
                memset(block, 1, size)
                let header = (block - MemoryLayout<Int>.size).load(as: Int.self)
                ownMappings.append(header & 2 != 0)
                free(block)
            }
            #expect(ownMappings == [true, true])
        #else
            #expect(!AllocatorPolicy.apply())
        #endif
    }
    @Test(
        "MEM-2: the allocator trim gives the free pages inside an arena back to the system: freed runs of small blocks between live ones stay resident without it and leave with it"
    )
    func trimReturnsFreePages() throws {
        #if os(Linux)
            // 16 MiB of 1 KiB blocks, every 64th kept: the others, freed, coalesce into runs of 63 KiB
            // between live blocks, which glibc cannot give back from the heap's top, so their pages stay
            // resident until a trim hands back the whole pages inside each run.
            let count = 16 * 1024
            let blocks = (0..<count).map { _ -> UnsafeMutableRawPointer in
                let block = malloc(1024)!
                memset(block, 1, 1024)
                return block
            }
            let kept = blocks.enumerated().filter { $0.offset % 64 == 63 }.map(\.element)
            defer { for block in kept { free(block) } }
            for (index, block) in blocks.enumerated() where index % 64 != 63 { free(block) }
            // The whole pages inside each run whose 63 blocks lay one after another (glibc puts a
            // 16-byte header before each): other runs met memory of other threads on the way.
            let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
            let addresses = blocks.map { UInt(bitPattern: $0) }
            var pages: [UInt] = []
            for run in stride(from: 0, to: count, by: 64) {
                let run = addresses[run..<run + 64]
                guard zip(run, run.dropFirst()).allSatisfy({ $1 == $0 + 1040 }) else { continue }
                let start = (run.first! + page - 1) / page * page
                let end = run.last! / page * page
                pages += stride(from: start, to: end, by: Int(page)).map { $0 }
            }
            try #require(pages.count > 1024)
            func residentShare() -> Double {
                var resident = 0
                var flag: UInt8 = 0
                for address in pages where mincore(UnsafeMutableRawPointer(bitPattern: address), Int(page), &flag) == 0 {
                    resident += Int(flag & 1)
                }
                return Double(resident) / Double(pages.count)
            }
            // A concurrent test's thread may take a little of the runs between the free and the check.
            #expect(residentShare() > 0.9)
            #expect(AllocatorPolicy.trim())
            #expect(residentShare() < 0.5)
        #else
            #expect(!AllocatorPolicy.trim())
        #endif
    }

    @Test(
        "MEM-3: the code pages start-up left mapped leave the process's RSS when released"
    )
    func codePagesLeave() throws {
        #if os(Linux)
            func residentFileKiB() throws -> Int {
                let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
                let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
                return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
            }
            let before = try residentFileKiB()
            let release = try #require(CodePages.release())
            let after = try residentFileKiB()
            // Pages of 4 KiB; concurrent tests fault some back in between, hence half.
            #expect(release.released * 4 > 8 * 1024)
            #expect(before - after > release.released * 4 / 2)
        #else
            #expect(CodePages.release() == nil)
        #endif
    }

    @Test(
        "MEM-4: the release keeps a private copy: of a file mapped privately, a page read is unmapped and reads the file again, a page written (then made read-only, as the loader does with relocations) keeps what was written"
    )
    func privateCopiesAreKept() throws {
        #if os(Linux)
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("mem4-\(UUID().uuidString)").path
            try Data(repeating: 7, count: 3 * page).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let file = open(path, O_RDONLY)
            try #require(file >= 0)
            defer { close(file) }
            let mapped = try #require(mmap(nil, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, file, 0))
            try #require(mapped != MAP_FAILED)
            defer { munmap(mapped, 3 * page) }
            let bytes = mapped.assumingMemoryBound(to: UInt8.self)
            #expect(bytes[0] == 7)  // page 0 read: a file page
            bytes[page] = 9  // page 1 written: a private copy
            try #require(mprotect(mapped, 3 * page, PROT_READ) == 0)  // page 2 never touched

            let release = try #require(CodePages.releaseClean(mapped, length: 3 * page))
            // Page 0, and page 2 too where the kernel mapped it around page 0's fault.
            #expect((1...2).contains(release.released))
            #expect(release.kept == 1)
            #expect(bytes[page] == 9)
            #expect(bytes[page + 1] == 7)
            #expect(bytes[0] == 7)
            #expect(bytes[2 * page] == 7)
        #else
            #expect(CodePages.release() == nil)
        #endif
    }
}
