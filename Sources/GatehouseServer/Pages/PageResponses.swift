import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Hosted pages: HTML with the security headers every page carries.
enum PageResponses {
    /// No scripts at all; inline styles only; forms post to ourselves; never framed.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static func html(_ body: String, status: HTTPResponse.Status = .ok, cookie: String? = nil) -> Response {
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .contentSecurityPolicy: contentSecurityPolicy,
            HTTPField.Name("X-Frame-Options")!: "DENY",
            // The URL carries a one-time token: never send it onwards.
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
            .cacheControl: "no-store",
        ]
        if let cookie { headers[.setCookie] = cookie }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func redirect(to url: URL) -> Response {
        Response(
            status: .seeOther,
            headers: [.location: url.absoluteString, .cacheControl: "no-store", HTTPField.Name("Referrer-Policy")!: "no-referrer"])
    }
}
