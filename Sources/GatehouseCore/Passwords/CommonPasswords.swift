import Foundation

/// The list of passwords people pick most, one per line, lowercased. The server ships one (Django's
/// list of 19,640; its source and licence are in `Resources/common-passwords.LICENSE`) and loads it
/// at start.
///
/// Kept as the list's own bytes and a sorted index of where each entry lies, searched by halving: a
/// third of a MiB where a `Set<String>` of the same entries held 2.5 MiB of a server's resident memory,
/// and a few milliseconds to load at each start.
public struct CommonPasswords: Sendable {
    private let bytes: [UInt8]
    /// Start and length of each entry in `bytes`, in byte order of the entries, without duplicates.
    private let entries: [Entry]

    private struct Entry: Sendable {
        var start: Int32
        var length: Int32
    }

    /// An empty list: nothing is common (tests of other rules, and a core built without the server's list).
    public static let none = CommonPasswords(list: "")

    public init(list: String) {
        // Lowercased by ASCII folding: the shipped list is lowercase already; this only keeps a line
        // typed in capitals from never matching.
        // A constant from here on: a closure that captured a variable would reach it through a box,
        // checked for exclusive access on every read of the sort's comparisons.
        let bytes = Array(list.utf8).map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }
        var entries: [Entry] = []
        entries.reserveCapacity(bytes.count / 8)
        var start = 0
        for end in bytes.indices where bytes[end] == UInt8(ascii: "\n") || end == bytes.count - 1 {
            var (from, to) = (start, bytes[end] == UInt8(ascii: "\n") ? end : end + 1)
            start = end + 1
            while from < to, bytes[from] == UInt8(ascii: " ") { from += 1 }
            while to > from, bytes[to - 1] == UInt8(ascii: " ") || bytes[to - 1] == UInt8(ascii: "\r") { to -= 1 }
            if to > from { entries.append(Entry(start: Int32(from), length: Int32(to - from))) }
        }
        let order = { (a: Entry, b: Entry) -> Bool in
            bytes[Int(a.start)..<Int(a.start + a.length)].lexicographicallyPrecedes(bytes[Int(b.start)..<Int(b.start + b.length)])
        }
        entries.sort(by: order)
        var unique: [Entry] = []
        unique.reserveCapacity(entries.count)
        for entry in entries where unique.last.map({ order($0, entry) }) ?? true { unique.append(entry) }
        self.bytes = bytes
        self.entries = unique
    }

    public var count: Int { entries.count }

    /// Whether `password` is on the list, ignoring case and surrounding spaces, or is an entry of at
    /// least four characters with digits and symbols added at its end (`password2024!`, `iloveyou123`):
    /// the change people make when a site asks for a longer password, and one guessing tools try first.
    public func contains(_ password: String) -> Bool {
        let normalized = password.trimmingCharacters(in: .whitespaces).lowercased()
        if has(normalized) { return true }
        var base = Substring(normalized)
        while let last = base.last, last.isNumber || last.isPunctuation || last.isSymbol || last == " " { base.removeLast() }
        return base.count < normalized.count && base.count >= Self.minimumBase && has(String(base))
    }

    private func has(_ candidate: String) -> Bool {
        let key = Array(candidate.utf8)
        var (low, high) = (0, entries.count)
        while low < high {
            let middle = (low + high) / 2
            let entry = entries[middle]
            let stored = bytes[Int(entry.start)..<Int(entry.start + entry.length)]
            if stored.elementsEqual(key) { return true }
            if stored.lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
        }
        return false
    }

    static let minimumBase = 4
}

/// Short on purpose: swift-service-lifecycle describes its services when a server starts, and the
/// default description walks every stored property by reflection, the list's 160,000 bytes included
/// (370 ms of a release build's start and 6 MiB of memory that stayed, found with `perf record`).
extension CommonPasswords: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "CommonPasswords(\(count) entries)" }
    public var debugDescription: String { description }
}
