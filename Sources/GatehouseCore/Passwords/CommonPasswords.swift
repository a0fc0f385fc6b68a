import Foundation

/// The list of passwords people pick most, one per line, lowercased. The server ships one (Django's
/// list of 19,640; its source and licence are in `Resources/common-passwords.LICENSE`) and loads it
/// at start.
public struct CommonPasswords: Sendable {
    private let entries: Set<String>

    /// An empty list: nothing is common (tests of other rules, and a core built without the server's list).
    public static let none = CommonPasswords(entries: [])

    public init(list: String) {
        var entries = Set<String>()
        for line in list.split(whereSeparator: \.isNewline) {
            let entry = line.trimmingCharacters(in: .whitespaces).lowercased()
            if !entry.isEmpty { entries.insert(entry) }
        }
        self.init(entries: entries)
    }

    private init(entries: Set<String>) {
        self.entries = entries
    }

    public var count: Int { entries.count }

    /// Whether `password` is on the list, ignoring case and surrounding spaces, or is an entry of at
    /// least four characters with digits and symbols added at its end (`password2024!`, `iloveyou123`):
    /// the change people make when a site asks for a longer password, and one guessing tools try first.
    public func contains(_ password: String) -> Bool {
        let normalized = password.trimmingCharacters(in: .whitespaces).lowercased()
        if entries.contains(normalized) { return true }
        var base = Substring(normalized)
        while let last = base.last, last.isNumber || last.isPunctuation || last.isSymbol || last == " " { base.removeLast() }
        return base.count < normalized.count && base.count >= Self.minimumBase && entries.contains(String(base))
    }

    static let minimumBase = 4
}
