import Foundation

/// TOTP codes from an implementation that is not Gatehouse's: PyPI's `pyotp` (which `.ci/run`
/// installs), run as a process, so a test of the server's TOTP never checks it against itself.
public enum IndependentTOTP {
    /// `pyotp`'s code for `secret` (base32) at `date`, or nil when pyotp is not installed.
    public static func code(_ secret: String, at date: Date) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", "import sys, pyotp; print(pyotp.TOTP(sys.argv[1]).at(int(sys.argv[2])))", secret,
            String(Int(date.timeIntervalSince1970)),
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether pyotp answers; tests that need it say so visibly when it does not.
    public static var isAvailable: Bool { (try? code("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", at: Date())) != nil }
}
