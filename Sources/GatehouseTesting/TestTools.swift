import Foundation

/// Tests that need a tool from outside the package (Chromium, a Python package): under CI (`CI` set)
/// a missing tool fails the run, because `.ci/run` installs it; elsewhere the test is skipped with a
/// note saying how to install it.
public enum TestTools {
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    public static var underCI: Bool {
        ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false
    }

    /// `present` as the test's enabling condition: throws under CI when absent, prints `note` otherwise.
    public static func require(_ present: Bool, what: String, install: String) throws -> Bool {
        guard !present else { return true }
        if underCI { throw Missing(description: "\(what) is required under CI") }
        print("note: \(what) is missing; the test is skipped (\(install))")
        return false
    }

    /// Whether `python3` can import every module named.
    public static func pythonHas(_ modules: String...) async throws -> Bool {
        try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import " + modules.joined(separator: ", ")])
            .status == 0
    }
}
