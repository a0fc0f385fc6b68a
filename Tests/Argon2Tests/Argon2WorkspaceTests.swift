import Testing

@testable import Argon2

@Suite("Argon2 workspaces")
struct Argon2WorkspaceTests {
    @Test(
        "ARW-1: one workspace serves hashes of growing and shrinking cost with the known answers (RFC 9106 §5.3, the argon2 CLI's OWASP tag), keeps its memory between them, is wiped after each, and gives it back on release"
    )
    func reuse() throws {
        let workspace = Argon2.Workspace()
        #expect(workspace.retainedBytes == 0)
        let rfc = {
            try Argon2.hash(
                password: [UInt8](repeating: 0x01, count: 32), salt: [UInt8](repeating: 0x02, count: 16),
                parameters: Argon2Parameters(memoryKiB: 32, iterations: 3, parallelism: 4), tagLength: 32,
                secret: [UInt8](repeating: 0x03, count: 8), associatedData: [UInt8](repeating: 0x04, count: 12), workspace: workspace)
        }
        let owasp = {
            try Argon2.hash(
                password: Array("password".utf8), salt: Array("somesalt12345678".utf8), parameters: .owaspDefault, workspace: workspace)
        }
        let rfcTag = "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"
        let owaspTag = "0c4c0b6db219194b6006e078818a24eabea136f7af619a31930310e7f2d749a5"
        #expect(Hex.encode(try rfc()) == rfcTag)
        #expect(workspace.retainedBytes == 32 * 1024)
        #expect(Hex.encode(try owasp()) == owaspTag)
        #expect(workspace.retainedBytes == 19456 * 1024, "grown to the larger cost")
        // A smaller hash in the larger block, then the larger again: the same answers, no new block.
        #expect(Hex.encode(try rfc()) == rfcTag)
        #expect(Hex.encode(try owasp()) == owaspTag)
        #expect(workspace.retainedBytes == 19456 * 1024)
        let words = workspace.buffer(words: 19456 * 128)
        #expect((0..<(19456 * 128)).allSatisfy { words[$0] == 0 }, "wiped after the hash")
        // PHC strings through the same workspace.
        let phc = try Argon2.hashPHC(password: "hunter2", parameters: .owaspDefault, workspace: workspace)
        #expect(try Argon2PHC(phc).verify(password: "hunter2", workspace: workspace))
        #expect(try !Argon2PHC(phc).verify(password: "hunter3", workspace: workspace))
        workspace.release()
        #expect(workspace.retainedBytes == 0)
    }
}
