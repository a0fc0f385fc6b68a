import AsyncHTTPClient
import Foundation
import GatehouseSMTP
import GatehouseCore
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// SMS through an HTTP gateway: `POST {"to": "+47…", "body": "…"}` as JSON to `GATEHOUSE_SMS_URL`.
/// Credentials in the URL become the `Authorization` header: `https://TOKEN@host/…` a bearer token,
/// `https://user:pass@host/…` basic auth. A 4xx answer (but 408 and 429) is permanent; anything else
/// that is not 2xx is retried by the outbox.
struct SMSGatewayTransport: MessageTransport {
    let endpoint: String
    let authorization: String?
    let timeout: Duration

    init(url raw: String, timeout: Duration) throws {
        self.timeout = timeout
        guard var components = URLComponents(string: raw), let scheme = components.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty
        else { throw SMSGatewayError.invalidURL }
        // The request carries the gateway token and the codes: plain HTTP only to this machine.
        guard scheme == "https" || SMTPConfiguration.isLoopback(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) else {
            throw SMSGatewayError.insecureURL
        }
        let user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        switch (user, password) {
        case (let user?, let password?) where !user.isEmpty:
            authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        case (let token?, nil) where !token.isEmpty:
            authorization = "Bearer " + token
        default:
            authorization = nil
        }
        components.user = nil
        components.password = nil
        guard let endpoint = components.string else { throw SMSGatewayError.invalidURL }
        self.endpoint = endpoint
    }

    struct Payload: Encodable {
        var to: String
        var body: String
    }

    func deliver(_ message: OutgoingMessage) async throws {
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: message.messageID)
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(Payload(to: message.recipient, body: message.text))))
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(timeout))
        } catch {
            throw DeliveryFailure(permanent: false, reason: "SMS gateway unreachable: \(type(of: error))")
        }
        _ = try? await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        guard (200..<300).contains(status) else {
            let permanent = (400..<500).contains(status) && status != 408 && status != 429
            throw DeliveryFailure(permanent: permanent, reason: "SMS gateway answered \(status)")
        }
    }
}

enum SMSGatewayError: Error, CustomStringConvertible {
    case invalidURL
    case insecureURL
    var description: String {
        switch self {
        case .invalidURL: "GATEHOUSE_SMS_URL must be an http(s) URL"
        case .insecureURL: "GATEHOUSE_SMS_URL must be https:// (http:// only to localhost): it carries the gateway's token and the codes"
        }
    }
}
