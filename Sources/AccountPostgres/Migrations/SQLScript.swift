import Foundation

/// Splits a SQL file into statements, since PostgresNIO speaks only the extended protocol (one
/// statement per query). Knows `--` and `/* */` comments, quoted strings and identifiers, and
/// dollar-quoted bodies (`$$ … $$`, `$fn$ … $fn$`), so semicolons inside them do not split.
package enum SQLScript {
    /// The statements of `sql`, trimmed, without empty ones.
    package static func statements(_ sql: String) -> [String] {
        let characters = Array(sql.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0
        func flush() {
            let text = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty, !isOnlyComments(text) { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        while index < characters.count {
            let c = characters[index]
            let next: Unicode.Scalar? = index + 1 < characters.count ? characters[index + 1] : nil
            if c == "-" && next == "-" {
                while index < characters.count && characters[index] != "\n" {
                    current.append(characters[index])
                    index += 1
                }
                continue
            }
            if c == "/" && next == "*" {
                var depth = 0
                repeat {
                    if characters[index] == "/" && index + 1 < characters.count && characters[index + 1] == "*" {
                        depth += 1
                        current.append(characters[index]); current.append(characters[index + 1])
                        index += 2
                    } else if characters[index] == "*" && index + 1 < characters.count && characters[index + 1] == "/" {
                        depth -= 1
                        current.append(characters[index]); current.append(characters[index + 1])
                        index += 2
                    } else {
                        current.append(characters[index])
                        index += 1
                    }
                } while depth > 0 && index < characters.count
                continue
            }
            if c == "'" || c == "\"" {
                current.append(c)
                index += 1
                while index < characters.count {
                    current.append(characters[index])
                    if characters[index] == c {
                        if index + 1 < characters.count && characters[index + 1] == c {
                            current.append(characters[index + 1])
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    index += 1
                }
                continue
            }
            if c == "$", let tagEnd = dollarTagEnd(characters, from: index) {
                let tag = Array(characters[index...tagEnd])
                current.append(contentsOf: tag)
                index = tagEnd + 1
                while index < characters.count {
                    if characters[index] == "$", index + tag.count <= characters.count,
                        Array(characters[index..<(index + tag.count)]) == tag
                    {
                        current.append(contentsOf: tag)
                        index += tag.count
                        break
                    }
                    current.append(characters[index])
                    index += 1
                }
                continue
            }
            if c == ";" {
                flush()
                index += 1
                continue
            }
            current.append(c)
            index += 1
        }
        flush()
        return statements
    }

    /// The index of the closing `$` of a dollar-quote tag starting at `start`, if one starts there.
    private static func dollarTagEnd(_ characters: [Unicode.Scalar], from start: Int) -> Int? {
        if start > 0 {
            let previous = characters[start - 1]
            if previous.properties.isAlphabetic || ("0"..."9").contains(previous) || previous == "_" { return nil }
        }
        var index = start + 1
        while index < characters.count {
            let c = characters[index]
            if c == "$" { return index }
            guard c.properties.isAlphabetic || c == "_" || (index > start + 1 && ("0"..."9").contains(c)) else { return nil }
            index += 1
        }
        return nil
    }

    private static func isOnlyComments(_ text: String) -> Bool {
        text.split(separator: "\n").allSatisfy { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty || trimmed.hasPrefix("--")
        }
    }
}
