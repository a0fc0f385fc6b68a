import ArgumentParser

@main
struct GatehouseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "Gatehouse: a self-hosted identity service.",
        discussion: """
            Every option of `serve` can also be set through the environment variable named in its help \
            (GATEHOUSE_*); a flag on the command line wins over the environment.
            """,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, ClientsCommand.self, UsersCommand.self, KeysCommand.self, OutboxCommand.self,
            HooksCommand.self, WebhooksCommand.self, AuditCommand.self, ConsoleCommand.self, SecretCommand.self,
        ],
        defaultSubcommand: nil)
}
