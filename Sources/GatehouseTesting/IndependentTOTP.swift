import Foundation

/// TOTP codes from an implementation that is not Gatehouse's: PyPI's `pyotp` (which `.ci/run`
/// installs), run as a process, so a test of the server's TOTP never checks it against itself.
public enum IndependentTOTP {
    /// The Python that has pyotp, found once per test process (through `env`, then called directly:
    /// a version manager's shim costs as much as the code itself), or nil without pyotp.
    private static let interpreter: Task<String?, Never> = Task {
        (try? await Subprocess.standardOutput("/usr/bin/env", ["python3", "-c", "import sys, pyotp; print(sys.executable)"])) ?? nil
    }

    /// `pyotp`'s code for `secret` (base32) at `date`, or nil when pyotp is not installed.
    public static func code(_ secret: String, at date: Date) async throws -> String? {
        guard let python = await interpreter.value else { return nil }
        return try await Subprocess.standardOutput(
            python,
            [
                "-c", "import sys, pyotp; print(pyotp.TOTP(sys.argv[1]).at(int(sys.argv[2])))", secret,
                String(Int(date.timeIntervalSince1970)),
            ])
    }

    /// Whether pyotp answers; tests that need it say so visibly when it does not.
    public static func isAvailable() async -> Bool { await interpreter.value != nil }
}
