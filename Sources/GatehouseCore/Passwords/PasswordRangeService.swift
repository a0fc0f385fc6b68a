import Crypto
import Foundation
import Logging

/// A k-anonymity range service in the shape of Have I Been Pwned's Pwned Passwords API: `GET
/// <base><first 5 hex digits of the SHA-1>` answers `SUFFIX:COUNT` lines for every known hash with
/// that prefix, and the match is made here. The service learns five hex digits, one of about a
/// million buckets that each hold hundreds of hashes; the password and its full hash never leave.
public struct PasswordRangeService: Sendable {
    /// Ends where the prefix is appended (`https://api.pwnedpasswords.com/range/`).
    public let baseURL: String
    let http: any FederationHTTP
    let logger: Logger

    public init(baseURL: String, http: any FederationHTTP, logger: Logger) {
        self.baseURL = baseURL
        self.http = http
        self.logger = logger
    }

    /// What the service said of one password.
    public enum Answer: Sendable, Equatable {
        case breached(count: Int)
        case notFound
        /// The service could not be asked or answered nonsense: the caller lets the password through
        /// (a range service that is down must not stop sign-ups), and a warning is logged.
        case unknown
    }

    public func check(_ password: String) async -> Answer {
        let hex = Insecure.SHA1.hash(data: Data(password.utf8)).map { String(format: "%02X", $0) }.joined()
        let prefix = String(hex.prefix(5))
        let suffix = hex.dropFirst(5)
        do {
            // Padding (answers of a random size, with made-up suffixes counted 0) hides the bucket's
            // size from someone who watches the encrypted traffic.
            let (status, body) = try await http.send(FederationRequest(url: baseURL + prefix, headers: [("Add-Padding", "true")]))
            guard (200..<300).contains(status) else { throw ProviderCallError.status(status) }
            return try Self.find(suffix, in: body)
        } catch {
            logger.warning(
                "the password range service did not answer; the password was let through unchecked",
                metadata: ["service": "\(baseURL)", "error": "\(error)"])
            return .unknown
        }
    }

    /// The count of `suffix` in a range answer. A line that is not `HEX:COUNT` makes the whole answer
    /// unusable: a service that answers an HTML error page with status 200 is not saying "not found".
    static func find(_ suffix: Substring, in body: Data) throws -> Answer {
        let text = String(decoding: body, as: UTF8.self)
        var answer = Answer.notFound
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":")
            guard parts.count == 2, parts[0].count == 35, parts[0].allSatisfy(\.isHexDigit),
                let count = Int(parts[1].trimmingCharacters(in: .whitespaces)), count >= 0
            else { throw ProviderCallError.malformed("a range line is not SUFFIX:COUNT") }
            if count > 0, parts[0].uppercased() == suffix { answer = .breached(count: count) }
        }
        return answer
    }
}
