import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The request's cookies by name (the first of each name wins, as RFC 6265 §5.4 orders them).
struct Cookies {
    private var values: [String: String] = [:]

    init(_ request: Request) {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, values[parts[0]] == nil { values[parts[0]] = parts[1] }
            }
        }
    }

    subscript(name: String) -> String? { values[name] }
}

/// A `Set-Cookie` value with the attributes every Gatehouse cookie carries: HttpOnly always, `Secure`
/// whenever the public URL is https, a SameSite policy and a path.
struct SetCookie: Sendable, Hashable {
    enum SameSite: String, Sendable { case strict = "Strict", lax = "Lax" }

    var name: String
    var value: String
    var path: String
    var maxAge: Int
    var sameSite: SameSite
    var secure: Bool

    var headerValue: String {
        "\(name)=\(value); Path=\(path); HttpOnly; SameSite=\(sameSite.rawValue); Max-Age=\(maxAge)" + (secure ? "; Secure" : "")
    }

    /// Tells the browser to drop the cookie.
    func expired() -> SetCookie {
        var copy = self
        copy.value = ""
        copy.maxAge = 0
        return copy
    }
}

/// The browser-session cookie of the hosted pages (single sign-on). `Lax`, so the top-level redirect
/// back from an app or a provider still carries it; the value is a random token whose hash the
/// server keeps (``BrowserSessions``).
enum BrowserSessionCookie {
    static let name = "gh_session"

    static func make(value: String, maxAge: Int, secure: Bool) -> SetCookie {
        SetCookie(name: name, value: value, path: "/", maxAge: maxAge, sameSite: .lax, secure: secure)
    }
}

/// A random value per browser that every hosted flow of that browser is bound to (its hash is the
/// flow's `csrfHash`; forms carry an HMAC of it). One per browser, not per flow, so two tabs can sign
/// in at once; `Lax`, so the redirect from an app to `/oauth/authorize` brings it along.
enum FlowBindingCookie {
    static let name = "gh_flow"

    /// The browser's value, or a new one with the `Set-Cookie` that gives it.
    static func binding(_ request: Request, maxAge: Int, secure: Bool) -> (value: String, setCookie: String?) {
        if let value = Cookies(request)[name], value.utf8.count == 43,
            value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        {
            return (value, nil)
        }
        let value = Base64URL.encode(Secrets.randomBytes(32))
        return (value, make(value: value, maxAge: maxAge, secure: secure))
    }

    /// The `Set-Cookie` value for `value`.
    static func make(value: String, maxAge: Int, secure: Bool) -> String {
        SetCookie(name: name, value: value, path: "/", maxAge: maxAge, sameSite: .lax, secure: secure).headerValue
    }
}

extension CoreSettings {
    /// The one decision whether cookies are `Secure`: when the public address is https. Behind a TLS
    /// proxy the public URL says https even though this process speaks plain HTTP.
    var secureCookies: Bool { publicURL.hasPrefix("https://") }
}
