import GatehouseTesting
import Testing

extension SMTPSink {
    /// The one message received; records an issue unless there is exactly one.
    func onlyMessage(sourceLocation: SourceLocation = #_sourceLocation) throws -> ReceivedMessage {
        let messages = try messages()
        try #require(
            messages.count == 1, "expected exactly one message, got \(messages.count)", sourceLocation: sourceLocation)
        return messages[0]
    }
}
