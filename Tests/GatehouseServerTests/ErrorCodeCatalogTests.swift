import Foundation
import GatehouseAPI
import Testing
import Yams

/// `ErrorCode.serverCodes` is the one list both the server and the SDK compile against. The server's
/// renderers refuse (in debug builds) to send a code outside it; these checks hold the list, the
/// constants, the server's sources and the OpenAPI document equal.
@Suite("The shared error-code list")
struct ErrorCodeCatalogTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `name → wire value` of every `ErrorCode` constant GatehouseAPI declares.
    static func declaredConstants() throws -> [String: String] {
        let source = try String(
            contentsOf: root.appendingPathComponent("GatehouseSDK/Sources/GatehouseAPI/ErrorCode.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"public static let (\w+): ErrorCode = "(\w+)""#)
        var constants: [String: String] = [:]
        for match in pattern.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            constants[String(source[Range(match.range(at: 1), in: source)!])] = String(source[Range(match.range(at: 2), in: source)!])
        }
        return constants
    }

    /// The server's Swift sources, one string, without comments: a code named only in a comment is
    /// not a code the server sends.
    static func serverSources() throws -> String {
        var text = ""
        for module in ["GatehouseCore", "GatehouseServer", "GatehouseStore"] {
            let directory = root.appendingPathComponent("Sources/\(module)")
            let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                if file.pathExtension == "swift" { text += withoutComments(try String(contentsOf: file, encoding: .utf8)) + "\n" }
            }
        }
        return text
    }

    /// Drops `//` line comments (outside string literals) and `/* */` blocks.
    static func withoutComments(_ source: String) -> String {
        var out = ""
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            var inString = false
            var previous: Character = " "
            var kept = ""
            for character in line {
                if character == "\"" && previous != "\\" { inString.toggle() }
                if !inString && character == "/" && previous == "/" {
                    kept.removeLast()
                    break
                }
                kept.append(character)
                previous = character
            }
            out += kept + "\n"
        }
        return out.replacingOccurrences(of: #"/\*[\s\S]*?\*/"#, with: "", options: .regularExpression)
    }

    @Test("EC-1: every ErrorCode constant is in the list and every listed code is a constant")
    func constantsAreTheList() throws {
        let constants = try Self.declaredConstants()
        #expect(constants.count > 30)
        #expect(Set(constants.values) == Set(ErrorCode.serverCodes.map(\.rawValue)))
        #expect(ErrorCode.serverCodes.count == Set(ErrorCode.serverCodes).count)
    }

    @Test("EC-2: every listed code is produced somewhere in the server, and no code is made from a string there")
    func serverSendsEveryCode() throws {
        let sources = try Self.serverSources()
        for (name, value) in try Self.declaredConstants() {
            let uses = try NSRegularExpression(pattern: #"(code:\s*\.|ErrorCode\s*=\s*\.|ErrorCode\.)"# + name + #"\b"#)
            #expect(
                uses.firstMatch(in: sources, range: NSRange(sources.startIndex..., in: sources)) != nil,
                "\(value) (ErrorCode.\(name)) is listed but no server code path uses it")
        }
        for made in [#"ErrorCode\(\s*""#, #"ErrorCode\(rawValue:"#, #"code:\s*""#, #"ErrorCode\s*=\s*""#] {
            let pattern = try NSRegularExpression(pattern: made)
            #expect(
                pattern.firstMatch(in: sources, range: NSRange(sources.startIndex..., in: sources)) == nil,
                "the server builds an ErrorCode from a string (\(made))")
        }
    }

    @Test(
        "EC-4: every description, summary and title in the OpenAPI document is text: schemathesis refuses a schema whose description is a number (an unquoted 600 stopped the CI fuzz run)"
    )
    func openAPITextIsText() throws {
        let yaml = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/GatehouseServer/Resources/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: yaml) as? [String: Any])
        var wrong: [String] = []
        func walk(_ node: Any, _ path: String) {
            if let object = node as? [String: Any] {
                for (key, value) in object {
                    // Under `properties` the keys are field names, which may be called `description` or `title`.
                    let isPropertyName = path.hasSuffix("/properties")
                    if !isPropertyName, ["description", "summary", "title"].contains(key), !(value is String) {
                        wrong.append("\(path)/\(key): \(value)")
                    }
                    walk(value, "\(path)/\(key)")
                }
            } else if let array = node as? [Any] {
                for (index, value) in array.enumerated() { walk(value, "\(path)/\(index)") }
            }
        }
        walk(document, "")
        #expect(wrong.isEmpty, "\(wrong.sorted())")
    }

    @Test("EC-3: the OpenAPI document lists exactly these codes (problem codes and OAuth errors)")
    func openAPIAgrees() throws {
        let yaml = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/GatehouseServer/Resources/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: yaml) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let problemCodes = try #require((schemas["ErrorCode"] as? [String: Any])?["examples"] as? [String])
        let oauth = try #require(((schemas["OAuthError"] as? [String: Any])?["properties"] as? [String: Any])?["error"] as? [String: Any])
        let oauthCodes = try #require(oauth["examples"] as? [String])
        let documented = Set(problemCodes).union(oauthCodes)
        let listed = Set(ErrorCode.serverCodes.map(\.rawValue))
        #expect(documented.subtracting(listed).isEmpty, "documented, not listed: \(documented.subtracting(listed).sorted())")
        #expect(listed.subtracting(documented).isEmpty, "listed, not documented: \(listed.subtracting(documented).sorted())")
    }
}
