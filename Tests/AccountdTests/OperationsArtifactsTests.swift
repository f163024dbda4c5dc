import AccountCore
import Foundation
import Testing
import Yams

/// The operators' artifacts speak the service's one metric vocabulary: every metric the Grafana
/// dashboard (`ops/grafana/accountd.json`) and the alert rules (`ops/prometheus/alerts.yml`) query is
/// a ``MetricFamily``, queried as its type allows (`_bucket`, `_sum`, `_count` of histograms only),
/// and every alert's runbook is a section of `docs/operations.md`.
@Suite("Operations artifacts: dashboard, alert rules, runbooks")
struct OperationsArtifactsTests {
    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The metric names an expression uses: its identifiers (`[a-zA-Z_:][a-zA-Z0-9_:]*`, whole) that
    /// start with `accountd_` or `process_`.
    static func metricNames(in expression: String) throws -> Set<String> {
        let identifier = try NSRegularExpression(pattern: #"(?<![a-zA-Z0-9_:])[a-zA-Z_:][a-zA-Z0-9_:]*"#)
        var names = Set<String>()
        for match in identifier.matches(in: expression, range: NSRange(expression.startIndex..., in: expression)) {
            let name = String(expression[Range(match.range, in: expression)!])
            if name.hasPrefix("accountd_") || name.hasPrefix("process_") { names.insert(name) }
        }
        return names
    }

    /// The family a series name belongs to and the histogram suffix it carries, if any.
    static func family(of name: String) -> (family: MetricFamily, suffix: String?)? {
        if let family = MetricFamily(rawValue: name) { return (family, nil) }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            if let family = MetricFamily(rawValue: String(name.dropLast(suffix.count))) { return (family, suffix) }
        }
        return nil
    }

    /// What is wrong with `name` as a series of the catalogue; nil when nothing is.
    static func problem(with name: String) -> String? {
        guard let match = family(of: name) else { return "\(name) is no MetricFamily" }
        switch (match.family.kind, match.suffix) {
        case (.histogram, nil): return "\(name) is a histogram: only its _bucket, _sum and _count series exist"
        case (.histogram, _), (_, nil): return nil
        case (let kind, let suffix?): return "\(name): \(suffix) of the \(kind.rawValue) \(match.family.rawValue)"
        }
    }

    /// Every target expression of every panel, rows' nested panels included, with its panel's title.
    static func expressions(of panels: [[String: Any]]) -> [(panel: String, expression: String)] {
        panels.flatMap { panel -> [(panel: String, expression: String)] in
            let title = panel["title"] as? String ?? "?"
            let targets = panel["targets"] as? [[String: Any]] ?? []
            let own = targets.compactMap { $0["expr"] as? String }.map { (panel: title, expression: $0) }
            return own + expressions(of: panel["panels"] as? [[String: Any]] ?? [])
        }
    }

    static func dashboard() throws -> [String: Any] {
        let data = try Data(contentsOf: root.appendingPathComponent("ops/grafana/accountd.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The rules of every group of the alert rules file.
    static func alertRules() throws -> [[String: Any]] {
        let rules = try #require(try Yams.load(yaml: text("ops/prometheus/alerts.yml")) as? [String: Any])
        let groups = try #require(rules["groups"] as? [[String: Any]])
        return groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }
    }

    /// GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces to
    /// hyphens), fenced code left out.
    static func anchors(_ markdown: String) -> Set<String> {
        var anchors = Set<String>()
        var fenced = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("#") else { continue }
            let heading = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            anchors.insert(
                String(
                    heading.lowercased().compactMap { character -> Character? in
                        if character == " " { return "-" }
                        return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
                    }))
        }
        return anchors
    }

    @Test("every metric the dashboard queries is a MetricFamily, histograms through their series")
    func dashboardNamesFamilies() throws {
        let dashboard = try Self.dashboard()
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = Self.expressions(of: panels)
        #expect(expressions.count >= 30)
        for (panel, expression) in expressions {
            let names = try Self.metricNames(in: expression)
            #expect(!names.isEmpty, "\(panel): \(expression) queries no accountd metric")
            for name in names.sorted() {
                #expect(Self.problem(with: name) == nil, "\(panel): \(Self.problem(with: name) ?? "")")
            }
        }
        // A Prometheus data source chosen at import, and the replicas to show.
        let variables = try #require((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]])
        let datasource = try #require(variables.first { $0["name"] as? String == "datasource" })
        #expect(datasource["type"] as? String == "datasource" && datasource["query"] as? String == "prometheus")
        let instance = try #require(variables.first { $0["name"] as? String == "instance" })
        #expect(instance["definition"] as? String == "label_values(accountd_build_info, instance)")
        let uids = Self.datasourceUIDs(of: panels)
        #expect(!uids.isEmpty && uids.allSatisfy { $0 == "${datasource}" }, "every panel and target queries ${datasource}: \(uids)")
    }

    /// The data source uid of every panel and target.
    static func datasourceUIDs(of panels: [[String: Any]]) -> [String] {
        panels.flatMap { panel -> [String] in
            let targets = panel["targets"] as? [[String: Any]] ?? []
            let own = ([panel] + targets).compactMap { ($0["datasource"] as? [String: Any])?["uid"] as? String }
            return own + datasourceUIDs(of: panel["panels"] as? [[String: Any]] ?? [])
        }
    }

    @Test("the dashboard shows every histogram through its buckets (latency quantiles)")
    func dashboardCoversHistograms() throws {
        let panels = try #require(try Self.dashboard()["panels"] as? [[String: Any]])
        var used = Set<String>()
        for (_, expression) in Self.expressions(of: panels) { try used.formUnion(Self.metricNames(in: expression)) }
        for family in MetricFamily.allCases where family.kind == .histogram {
            #expect(used.contains(family.rawValue + "_bucket"), "no panel shows \(family.rawValue)'s quantiles")
        }
    }

    @Test("every metric an alert rule queries is a MetricFamily; every rule is complete")
    func alertRulesNameFamilies() throws {
        let rules = try Self.alertRules()
        var alerts = Set<String>()
        for rule in rules {
            let name = try #require(rule["alert"] as? String, "a recording rule in alerts.yml")
            alerts.insert(name)
            let expression = try #require(rule["expr"] as? String, "\(name) has no expr")
            let names = try Self.metricNames(in: expression)
            #expect(!names.isEmpty || expression.contains("up{"), "\(name): \(expression) queries no accountd metric")
            for metric in names.sorted() {
                #expect(Self.problem(with: metric) == nil, "\(name): \(Self.problem(with: metric) ?? "")")
            }
            #expect(rule["for"] is String, "\(name) has no for")
            let severity = (rule["labels"] as? [String: Any])?["severity"] as? String
            #expect(severity == "critical" || severity == "warning", "\(name): severity \(severity ?? "none")")
            let annotations = rule["annotations"] as? [String: Any] ?? [:]
            for key in ["summary", "description", "runbook"] {
                #expect((annotations[key] as? String)?.isEmpty == false, "\(name) has no \(key)")
            }
        }
        let required: Set = [
            "AccountdHighErrorRate", "AccountdHighLatency", "AccountdDatabaseDown", "AccountdPoolStarved", "AccountdOutboxBacklog",
            "AccountdLimiterRefusalsHigh", "AccountdRevocationListenerDown", "AccountdHashQueueRefusing", "AccountdDown",
        ]
        #expect(required.isSubset(of: alerts), "missing: \(required.subtracting(alerts).sorted())")
    }

    @Test("every alert's runbook is a section of docs/operations.md")
    func runbooksExist() throws {
        let anchors = try Self.anchors(Self.text("docs/operations.md"))
        for rule in try Self.alertRules() {
            let name = rule["alert"] as? String ?? "?"
            let runbook = try #require((rule["annotations"] as? [String: Any])?["runbook"] as? String, "\(name) has no runbook")
            let parts = runbook.split(separator: "#", maxSplits: 1).map(String.init)
            #expect(parts.count == 2 && parts[0] == "docs/operations.md", "\(name): runbook \(runbook)")
            #expect(parts.count == 2 && anchors.contains(parts[1]), "\(name): no heading of docs/operations.md has the anchor \(runbook)")
        }
    }
}
