import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat

/// JSON and form bodies, with the contract's answers for every way a body can be wrong: 415 for other
/// content types, 413 past 1 MiB, 400 for malformed JSON or invalid UTF-8, 422 for missing fields,
/// wrong types and nulls (with the field named).
enum RequestDecoding {
    static let maxBody = 1 << 20

    /// `nullable`: fields whose `null` the contract documents as "absent"; every other null is a 422.
    static func json<T: Decodable>(
        _ type: T.Type, from request: Request, context: some RequestContext, nullable: Set<String> = []
    ) async throws -> T {
        guard let contentType = request.headers[.contentType], isJSON(contentType) else {
            throw GatehouseError.unsupportedMediaType("Send the body as application/json.")
        }
        let data = Data(buffer: try await collect(request))
        let decoded: T
        do {
            decoded = try decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            throw problem(for: error)
        }
        try NullFields.reject(in: data, allowing: nullable) { probe in (try? decoder.decode(T.self, from: probe)) == nil }
        return decoded
    }

    /// An optional JSON body: absent or empty is `nil`.
    static func optionalJSON<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T? {
        if request.headers[.contentType] == nil {
            let buffer = try await collect(request)
            guard buffer.readableBytes == 0 else {
                throw GatehouseError.unsupportedMediaType("Send the body as application/json.")
            }
            return nil
        }
        return try await json(type, from: request, context: context)
    }

    /// `application/x-www-form-urlencoded`, as RFC 6749 requires for `/oauth/*`: errors in its shape.
    static func form(from request: Request) async throws -> [String: String] {
        try await formFields(from: request)
    }

    /// A form body (OAuth endpoints and hosted pages); repeated fields are refused (RFC 6749 §3.1).
    static func formFields(from request: Request) async throws -> [String: String] {
        guard let contentType = request.headers[.contentType],
            contentType.lowercased().hasPrefix("application/x-www-form-urlencoded")
        else {
            throw GatehouseError.unsupportedMediaType("Send the body as application/x-www-form-urlencoded.")
        }
        let buffer = try await collect(request)
        return try FormBody.fields(buffer.readableBytesView)
    }

    static func collect(_ request: Request) async throws -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBody {
            throw tooLarge
        }
        do {
            return try await request.body.collect(upTo: maxBody)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            // A body in one buffer fails with HTTPError; a streamed (chunked) one with NIO's
            // NIOTooManyBytesError. Both mean the same, and reading stops at the limit either way.
            throw tooLarge
        }
    }

    static let tooLarge = GatehouseError.payloadTooLarge

    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }

    private static let decoder = WireCoding.decoder()

    static func problem(for error: DecodingError) -> GatehouseError {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            (codingPath + (key.map { [$0] } ?? [])).map { $0.intValue.map(String.init) ?? $0.stringValue }
                .joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .validation(field: path(context.codingPath, key), code: .required, message: "\(key.stringValue) is required.")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = path(context.codingPath)
            return .validation(
                field: field.isEmpty ? nil : field, code: .invalidType, message: "\(field.isEmpty ? "The body" : field) has the wrong type."
            )
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            let field = path(context.codingPath)
            return .validation(field: field, code: .invalidValue, message: "\(field) has an invalid value.")
        default:
            return .badRequest("The body is not valid JSON.", code: .malformedBody)
        }
    }
}
