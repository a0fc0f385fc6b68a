/// RFC 2047 encoded-words, the only way to put non-ASCII text in a header without SMTPUTF8.
///
/// Only the B (base64) encoding is produced: it is valid in every position an encoded-word may
/// appear (Subject and display-name phrases alike), whereas Q needs different escaping per position.
enum RFC2047 {
    /// Bytes of UTF-8 per word. Base64 of 36 bytes is 48 characters, so a word is
    /// `=?utf-8?B?` + 48 + `?=` = 60 characters: under RFC 2047's 75, and short enough that
    /// `Subject: ` plus one word stays under 78 characters per line.
    static let maximumBytesPerWord = 36

    /// Encodes `text` as one or more encoded-words, each at most 60 characters.
    ///
    /// Words break only between characters (grapheme clusters, or Unicode scalars within an
    /// oversized cluster), since RFC 2047 forbids splitting a character across words. Decoders
    /// drop the whitespace between adjacent encoded-words, so the split adds nothing to the text.
    static func encodedWords(_ text: String) -> [String] {
        var words: [String] = []
        var chunk: [UInt8] = []

        func flush() {
            guard !chunk.isEmpty else { return }
            words.append("=?utf-8?B?" + Base64.encode(chunk) + "?=")
            chunk.removeAll(keepingCapacity: true)
        }

        func append(_ piece: some Collection<UInt8>) {
            if chunk.count + piece.count > maximumBytesPerWord { flush() }
            chunk.append(contentsOf: piece)
        }

        for character in text {
            let utf8 = character.utf8
            if utf8.count <= maximumBytesPerWord {
                append(utf8)
            } else {
                // An enormous cluster (long emoji sequences, stacked combining marks): split by scalar.
                for scalar in character.unicodeScalars { append(String(scalar).utf8) }
            }
        }
        flush()
        return words
    }
}
