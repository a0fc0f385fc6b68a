import Foundation

/// `--flag` value, else the environment variable, else the default: the contract's precedence.
enum Env {
    static func value(_ flag: String?, _ variable: String) -> String? {
        if let flag { return flag }
        if let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty { return value }
        return nil
    }

    /// `VARIABLE=1`: an opt-in that only the environment gives.
    static func flag(_ variable: String) -> Bool { ProcessInfo.processInfo.environment[variable] == "1" }
}
