import Hummingbird

extension Request {
    /// The query string's fields, decoded the one way every route reads them: as a form (`+` is a space,
    /// `%XX` a byte), as browsers and form encoders write it. A malformed or repeated field is a 400.
    func queryFields() throws -> [String: String] {
        try FormBody.fields(Array((uri.query ?? "").utf8))
    }
}
