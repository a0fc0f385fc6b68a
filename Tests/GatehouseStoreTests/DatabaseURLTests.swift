import Foundation
import GatehouseStore
import Testing

@Suite("Database URLs")
struct DatabaseURLTests {
    @Test("PostgreSQL on another machine: verify-full by default, weaker modes refused unless the network is trusted; loopback as given")
    func postgresTLS() throws {
        #expect(
            try DatabaseURL("postgres://u:p@db.example.com:5432/gh")
                == .postgres(url: "postgres://u:p@db.example.com:5432/gh?sslmode=verify-full"))
        #expect(
            try DatabaseURL("postgres://u@db.example.com/gh?sslmode=verify-full")
                == .postgres(url: "postgres://u@db.example.com/gh?sslmode=verify-full"))
        for mode in ["disable", "allow", "prefer", "require", "verify-ca"] {
            #expect(throws: DatabaseURLError.self) { try DatabaseURL("postgres://u@10.0.0.5/gh?sslmode=\(mode)") }
            #expect(
                try DatabaseURL("postgres://u@10.0.0.5/gh?sslmode=\(mode)", allowPlaintextToRemote: true)
                    == .postgres(url: "postgres://u@10.0.0.5/gh?sslmode=\(mode)"))
        }
        for host in ["127.0.0.1:54329", "localhost", "[::1]:5432"] {
            #expect(try DatabaseURL("postgres://u@\(host)/gh?sslmode=disable") == .postgres(url: "postgres://u@\(host)/gh?sslmode=disable"))
            #expect(try DatabaseURL("postgres://u@\(host)/gh") == .postgres(url: "postgres://u@\(host)/gh"))
        }
        let refusal = #expect(throws: DatabaseURLError.self) { try DatabaseURL("postgres://u:secret@db.internal/gh?sslmode=require") }
        #expect(refusal.map { "\($0)" }?.contains("verify-full") == true)
        #expect(refusal.map { "\($0)" }?.contains("secret") == false)
    }
}
