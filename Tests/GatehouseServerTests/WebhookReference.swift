import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

/// The `standardwebhooks` package from PyPI, the scheme's reference implementation, run on what a
/// test endpoint recorded.
enum WebhookReference {
    static func available() async throws -> Bool {
        try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import standardwebhooks"]).status == 0
    }

    /// Checks every recorded request with the `standardwebhooks` package from PyPI: each secret alone
    /// verifies it; a changed body and a timestamp ten minutes old do not.
    static func verify(_ requests: [HookServer.Received], secrets: [String], expectTampered: Bool) async throws {
        guard try await available() else {
            print("SKIPPED reference verification: python3 with standardwebhooks is not installed")
            return
        }
        let records = requests.map { ["headers": $0.headers, "body": $0.text] }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: records).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let run = try await Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", verifier, path.path] + secrets)
        #expect(run.status == 0, "\(run.output)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], "\(run.output)")
        #expect(result["verified"] as? [Int] == secrets.map { _ in requests.count }, "\(run.output)")
        #expect(result["tampered_rejected"] as? Int == requests.count)
        #expect(result["stale_rejected"] as? Int == requests.count)
    }

    static let verifier = """
        import json, sys
        from standardwebhooks.webhooks import Webhook, WebhookVerificationError
        records = json.load(open(sys.argv[1]))
        secrets = sys.argv[2:]
        verified = [0 for _ in secrets]
        tampered = stale = 0
        for r in records:
            for i, s in enumerate(secrets):
                try:
                    Webhook(s).verify(r["body"], r["headers"])
                    verified[i] += 1
                except WebhookVerificationError:
                    pass
            try:
                Webhook(secrets[0]).verify(r["body"] + " ", r["headers"])
            except WebhookVerificationError:
                tampered += 1
            old = dict(r["headers"])
            old["webhook-timestamp"] = str(int(old["webhook-timestamp"]) - 600)
            try:
                Webhook(secrets[0]).verify(r["body"], old)
            except WebhookVerificationError:
                stale += 1
        print(json.dumps({"verified": verified, "tampered_rejected": tampered, "stale_rejected": stale}))
        """
}
