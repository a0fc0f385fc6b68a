import Foundation
import GatehouseCore

/// The common-passwords list shipped in the server's resources (`common-passwords.txt`; source and
/// licence in `common-passwords.LICENSE`), read once per process: every server a process starts (the
/// tests start hundreds) shares the one set.
enum BundledPasswordList {
    /// A binary without its resources does not start (as without its templates): a server that quietly
    /// accepted `password123` would be weaker than the one its operator deployed.
    static func load() throws -> CommonPasswords { try shared.get() }

    private static let shared: Result<CommonPasswords, TemplateError> = {
        guard let url = Bundle.module.url(forResource: "common-passwords", withExtension: "txt"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return .failure(.missing("bundled common-passwords.txt")) }
        return .success(CommonPasswords(list: text))
    }()
}
