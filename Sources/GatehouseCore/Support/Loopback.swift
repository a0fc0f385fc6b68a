/// Whether a host name or address names this machine: `localhost`, `127.0.0.0/8`, `::1` (bracketed
/// or spelt out), or an IPv4-mapped loopback address (`::ffff:127.0.0.1`). Used where loopback is
/// trusted more than the network (a database without TLS, `/metrics` without a token).
/// GatehouseSMTP keeps its own copy: it depends on nothing of Gatehouse's.
public enum Loopback {
    public static func contains(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasPrefix("::ffff:") { name = String(name.dropFirst(7)) }
        return name == "localhost" || name.hasPrefix("127.") || name == "::1" || name == "0:0:0:0:0:0:0:1"
    }
}
