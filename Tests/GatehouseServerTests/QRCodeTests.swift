import Foundation
import GatehouseServer
import GatehouseTesting
import Testing

/// The hand-written QR encoder, read back by a real decoder (zbarimg, Debian's zbar-tools): what the
/// enrolment page draws must scan. The hosted page's own QR code is decoded from a browser screenshot
/// in MFA-5.
@Suite("QR codes")
struct QRCodeTests {
    static let zbarimg = "/usr/bin/zbarimg"

    /// The symbol as a plain PBM image (scale 4, quiet zone 4), which zbarimg reads.
    static func pbm(_ code: QRCode) -> Data {
        let scale = 4
        let side = (code.size + 8) * scale
        var text = "P1\n\(side) \(side)\n"
        for y in 0..<side {
            let row = (0..<side).map { x in code[x / scale - 4, y / scale - 4] ? "1" : "0" }
            text += row.joined(separator: " ") + "\n"
        }
        return Data(text.utf8)
    }

    static func decode(_ code: QRCode) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString).pbm")
        try pbm(code).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        // Only the QR decoder: the others print warnings (into the same output) on what they cannot read.
        let result = try await Subprocess.run(
            URL(fileURLWithPath: zbarimg), ["--raw", "-q", "--nodbus", "-Sdisable", "-Sqrcode.enable", "-Sqrcode.binary", file.path])
        #expect(result.status == 0, "\(result.output)")
        return result.output.hasSuffix("\n") ? String(result.output.dropLast()) : result.output
    }

    @Test(
        "QR-1: otpauth URIs and text of 1 to 300 bytes at every correction level decode with zbarimg to exactly what was encoded; the version grows with the data; data past version 40 is refused; the SVG is one path with an escaped title and no script",
        .enabled("needs zbarimg (apt-get install zbar-tools)") {
            try TestTools.require(
                FileManager.default.isExecutableFile(atPath: Self.zbarimg), what: "zbarimg (a QR code decoder)",
                install: "apt-get install zbar-tools")
        })
    func decodes() async throws {
        let uri =
            "otpauth://totp/Gatehouse:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30"
        var payloads = [uri, "a", String(repeating: "0123456789", count: 30)]
        payloads += stride(from: 7, through: 300, by: 41).map { length in
            String((0..<length).map { _ in "abcXYZ019-/:?&=%".randomElement()! })
        }
        for correction in QRCode.Correction.allCases {
            for payload in payloads {
                let code = try QRCode(encoding: Array(payload.utf8), correction: correction)
                #expect(code.size == 17 + 4 * code.version)
                let decoded = try await Self.decode(code)
                #expect(decoded == payload, "\(correction) \(payload.count) bytes, version \(code.version): \(decoded.debugDescription)")
            }
        }
        let small = try QRCode(encoding: Array("a".utf8))
        let large = try QRCode(encoding: Array(uri.utf8))
        #expect(small.version == 1 && large.version > small.version)
        #expect(throws: QRCode.Failure.tooLong) { try QRCode(encoding: Array(repeating: 0x41, count: 3000), correction: .low) }

        let svg = large.svg(moduleSize: 4, quietZone: 4, title: "QR <code> & \"app\"")
        #expect(svg.hasPrefix("<svg") && svg.components(separatedBy: "<path").count == 2, "\(svg.prefix(300))")
        #expect(svg.contains("QR &lt;code&gt; &amp;") && !svg.contains("<script") && !svg.contains("href"))
    }
}
