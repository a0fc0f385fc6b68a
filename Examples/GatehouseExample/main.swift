// A command-line app on the Gatehouse SDK: signs up, verifies with the code from the development
// outbox, signs in, calls /v1/me through authorizedData, and prints every auth-state event.
//
//   swift run gatehouse-example --url http://127.0.0.1:8080 --client-id CLIENT --outbox ./outbox
//
// `refresh-loop` (used by the SDK tests) refreshes a stored session N times from a shared file store.
// `device` signs in with the device authorization grant (a code to type on another screen).
import Foundation
import Gatehouse
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let index = args.firstIndex(of: name), index + 1 < args.count else { return nil }
    return args[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

guard let url = argument("--url").flatMap(URL.init(string:)), let clientID = argument("--client-id") else {
    fail(
        "usage: gatehouse-example --url URL --client-id ID [--outbox DIR] [--store FILE] | refresh-loop --store FILE --count N | device")
}
let storeURL = URL(
    fileURLWithPath: argument("--store")
        ?? FileManager.default.temporaryDirectory
        .appendingPathComponent("gatehouse-example-\(UUID().uuidString).json").path)
let client = AuthClient(configuration: .init(baseURL: url, clientID: clientID, store: FileSessionStore(url: storeURL)))

if CommandLine.arguments.dropFirst().first == "refresh-loop" {
    let count = Int(argument("--count") ?? "10") ?? 10
    await client.restore()
    for _ in 0..<count {
        do {
            try await client.refreshSession()
            var request = URLRequest(url: url.appendingPathComponent("/v1/me"))
            request.httpMethod = "GET"
            let (_, response) = try await client.authorizedData(for: request)
            guard response.statusCode == 200 else { fail("GET /v1/me answered \(response.statusCode)") }
        } catch {
            fail("\(error)")
        }
    }
    print("refresh-loop ok \(count)")
    exit(0)
}

// `device`: the device authorization grant, as a TV or a command line signs in: show the code, wait
// while a person approves on another screen.
if CommandLine.arguments.dropFirst().first == "device" {
    do {
        let authorization = try await client.startDeviceAuthorization(scopes: [.openid, .profile])
        print("To sign in, open \(authorization.verificationURI.absoluteString) and enter \(authorization.userCode)")
        if let complete = authorization.verificationURIComplete { print("(or open \(complete.absoluteString))") }
        let result = try await client.signIn(deviceAuthorization: authorization)
        print("signed in as \(result.user.email ?? result.user.id.uuidString)")
        exit(0)
    } catch {
        fail("\(error)")
    }
}

let outbox = argument("--outbox") ?? "./outbox"
let events = await client.events()
let printer = Task {
    for await event in events { print("event:", event) }
}

/// The newest verification code mailed to `email`, read from the development outbox.
func code(for email: String) async throws -> String {
    for _ in 0..<100 {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? []
        for file in files.sorted().reversed() where file.contains("verification-\(email)") {
            let text = try String(contentsOfFile: outbox + "/" + file, encoding: .utf8)
            if let subject = text.split(separator: "\r\n").first(where: { $0.hasPrefix("Subject:") }),
                let code = subject.split(whereSeparator: { !$0.isNumber }).first(where: { $0.count == 6 })
            {
                return String(code)
            }
        }
        try await Task.sleep(for: .milliseconds(100))
    }
    fail("no verification mail for \(email) in \(outbox)")
}

do {
    let email = argument("--email") ?? "example-\(UUID().uuidString.prefix(8).lowercased())@example.com"
    let password = "example password 123"
    switch try await client.signUp(email: email, password: password) {
    case .signedIn(let result):
        print("signed up and in as", result.user.email ?? "?", "new:", result.isNew)
    case .verificationRequired:
        print("verification mailed to", email)
        let user = try await client.signIn(email: email, verificationCode: try await code(for: email)).user
        print("verified", user.email ?? "?")
    }
    try await client.signOut()
    try await client.signIn(email: email, password: password)
    var request = URLRequest(url: url.appendingPathComponent("/v1/me"))
    request.httpMethod = "GET"
    let (data, response) = try await client.authorizedData(for: request)
    print("GET /v1/me →", response.statusCode, String(decoding: data, as: UTF8.self))
    guard response.statusCode == 200 else { fail("unexpected status") }
    try await client.signOut(scope: .global)
    try await Task.sleep(for: .milliseconds(100))
    printer.cancel()
    print("example finished")
} catch {
    fail("\(error)")
}
