import Foundation
import GatehouseCore

/// Bar charts for the console's overview as inline SVG: no script, no request, readable by screen
/// readers (a title and a text summary). Drawn here because none of the listed packages draws charts,
/// and a charting script would need a build step and a looser CSP.
enum ConsoleChart {
    /// `counts`: one value per day, oldest first. Only integers reach the markup.
    static func bars(_ counts: [Int], label: String, colour: String) -> String {
        let width = 280, height = 90, gap = 2
        let top = max(1, counts.max() ?? 1)
        let barWidth = max(2, (width - gap * (counts.count - 1)) / max(1, counts.count))
        var svg =
            ##"<svg role="img" viewBox="0 0 \##(width) \##(height + 14)" width="100%" height="110" xmlns="http://www.w3.org/2000/svg">"##
        svg += "<title>\(escape(label)): \(counts.map(String.init).joined(separator: ", ")) per day, oldest first</title>"
        svg += ##"<line x1="0" y1="\##(height)" x2="\##(width)" y2="\##(height)" stroke="#9aa4b6" stroke-width="1"/>"##
        for (index, count) in counts.enumerated() {
            let barHeight = count == 0 ? 0 : max(2, count * (height - 4) / top)
            let x = index * (barWidth + gap)
            svg +=
                ##"<rect x="\##(x)" y="\##(height - barHeight)" width="\##(barWidth)" height="\##(barHeight)" fill="\##(colour)"><title>\##(count)</title></rect>"##
        }
        svg += ##"<text x="0" y="\##(height + 12)" font-size="10" fill="#4a5468">\##(counts.count) days ago</text>"##
        svg += ##"<text x="\##(width)" y="\##(height + 12)" font-size="10" fill="#4a5468" text-anchor="end">today · max \##(top)</text>"##
        return svg + "</svg>"
    }

    /// The last `days` UTC days of one series, oldest first, zeros where nothing happened.
    static func series(_ activity: DailyActivity, _ name: String, days: Int, now: Date) -> [Int] {
        let today = Int(now.timeIntervalSince1970) / 86400
        return ((today - days + 1)...today).map { activity.series[name]?[$0] ?? 0 }
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }
}
