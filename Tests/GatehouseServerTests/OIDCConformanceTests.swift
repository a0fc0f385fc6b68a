import Foundation
import GatehouseTesting
import Testing

/// The OpenID Foundation's Basic OP, Form Post OP and Config OP certification plans, ported into
/// `scripts/oidc/conformance.py`, run once against a real `gatehouse serve` (its own database, clients
/// and user, made with the CLI); each module is a case of its own here, named after the suite's module id.
@Suite("OpenID certification plans (ported)")
struct OIDCConformanceTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/oidc/conformance.py")

    static let basic = [
        "oidcc-server", "oidcc-response-type-missing", "oidcc-userinfo-get", "oidcc-userinfo-post-header", "oidcc-userinfo-post-body",
        "oidcc-ensure-request-without-nonce-succeeds-for-code-flow", "oidcc-scope-profile", "oidcc-scope-email", "oidcc-scope-address",
        "oidcc-scope-phone", "oidcc-scope-all", "oidcc-alternate-happy-flow", "oidcc-display-page", "oidcc-display-popup",
        "oidcc-prompt-login", "oidcc-prompt-none-not-logged-in", "oidcc-prompt-none-logged-in", "oidcc-max-age-1", "oidcc-max-age-10000",
        "oidcc-ensure-request-with-unknown-parameter-succeeds", "oidcc-id-token-hint", "oidcc-login-hint", "oidcc-ui-locales",
        "oidcc-claims-locales", "oidcc-ensure-request-with-acr-values-succeeds", "oidcc-codereuse", "oidcc-codereuse-30seconds",
        "oidcc-ensure-registered-redirect-uri", "oidcc-ensure-post-request-succeeds", "oidcc-server-client-secret-post",
        "oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported", "oidcc-claims-essential",
        "oidcc-ensure-request-object-with-redirect-uri", "oidcc-refresh-token", "oidcc-ensure-request-with-valid-pkce-succeeds",
    ]

    /// `plan/module`, as the suite's plans list them (static client: the three dynamic-only modules are
    /// not in the plans).
    static let modules = basic.map { "basic/" + $0 } + basic.map { "formpost/" + $0 } + ["config/oidcc-discovery-endpoint-verification"]

    static func available() async throws -> Bool {
        try TestTools.require(
            try await TestTools.pythonHas("requests", "jwt"), what: "requests and PyJWT (the ported conformance plans)",
            install: "pip install requests pyjwt")
    }

    @Test(
        "OIDCC-1: the OpenID Foundation's Basic, Form Post and Config OP plans, ported (scripts/oidc/conformance.py): every module passes against a real gatehouse serve, one case per module, ID tokens checked by an RS256-only relying party",
        .enabled("needs python3 with requests and PyJWT") { try await Self.available() }, arguments: Self.modules)
    func module(_ id: String) async throws {
        let results = try await ConformanceRun.shared.results()
        let result = try #require(results[id], "the harness did not report \(id): \(results.keys.sorted())")
        #expect(result.outcome == "PASSED" || result.outcome == "WARNING", "\(id): \(result.outcome) \(result.failures)")
        if !result.warnings.isEmpty { print("note: \(id) warnings: \(result.warnings)") }
    }
}

/// One run of the harness for all the cases (it starts a server and waits 30 s in one module, so it
/// runs once, not per case).
actor ConformanceRun {
    static let shared = ConformanceRun()
    private var run: Task<[String: ModuleResult], any Error>?

    struct ModuleResult: Sendable {
        var outcome: String
        var failures: [String]
        var warnings: [String]
    }

    func results() async throws -> [String: ModuleResult] {
        if run == nil {
            run = Task {
                let binary = Subprocess.builtProduct("gatehouse")
                let (status, output) = try await Subprocess.run(
                    URL(fileURLWithPath: "/usr/bin/env"),
                    ["python3", OIDCConformanceTests.script.path, "--gatehouse", binary.path, "--allow-http"])
                var results: [String: ModuleResult] = [:]
                for line in output.split(separator: "\n") where line.hasPrefix("{") {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                        let plan = object["plan"] as? String, let module = object["module"] as? String
                    else { continue }
                    results[plan + "/" + module] = ModuleResult(
                        outcome: object["result"] as? String ?? "-", failures: object["failures"] as? [String] ?? [],
                        warnings: object["warnings"] as? [String] ?? [])
                }
                if results.isEmpty { throw HarnessFailed(status: status, output: String(output.suffix(4000))) }
                return results
            }
        }
        return try await run!.value
    }

    struct HarnessFailed: Error, CustomStringConvertible {
        var status: Int32
        var output: String
        var description: String { "the conformance harness reported nothing (exit \(status)): \(output)" }
    }
}
