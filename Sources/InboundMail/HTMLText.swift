import Foundation

/// HTML to plain text, for reading only (the result is never rendered): tags stripped, `script`, `style`, `head`
/// content, `title` and comments dropped, entities decoded, blanks collapsed as a browser would, and a line break
/// for each block element (`br`, `p`, `div`, list items, table rows, headings, …), a blank line after paragraphs.
public enum HTMLText {
    /// The text of `html`.
    public static func text(_ html: String) -> String {
        var output = Output()
        let scalars = Array(html.unicodeScalars)
        var index = 0
        var skipping: String?  // inside script/style/title/…: everything up to its end tag is dropped
        var preformatted = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "<" {
                if let end = comment(scalars, at: index) {
                    index = end
                    continue
                }
                if let tag = Tag(scalars, at: index) {
                    index = tag.end
                    if let name = skipping {
                        // A <head> left open ends where the body starts.
                        if (tag.closing && tag.name == name) || (name == "head" && tag.name == "body" && !tag.closing) { skipping = nil }
                        continue
                    }
                    if !tag.closing && !tag.selfClosing && dropped.contains(tag.name) {
                        skipping = tag.name
                        continue
                    }
                    if tag.name == "pre" { preformatted = max(0, preformatted + (tag.closing ? -1 : 1)) }
                    output.apply(tag)
                    continue
                }
            }
            index += 1
            if skipping != nil { continue }
            if scalar == "&" {
                let (decoded, end) = entity(scalars, at: index - 1)
                index = end
                output.text(decoded, preformatted: preformatted > 0)
                continue
            }
            output.text(String(scalar), preformatted: preformatted > 0)
        }
        return output.finished()
    }

    /// Elements whose content is not text to read.
    private static let dropped: Set<String> = ["script", "style", "title", "head", "template"]
    /// Elements that break the line before and after them.
    private static let blocks: Set<String> = [
        "div", "ul", "ol", "table", "thead", "tbody", "tfoot", "tr", "blockquote", "pre", "center",
        "section", "article", "header", "footer", "nav", "aside", "main", "form", "fieldset", "dl",
        "dt", "dd", "address", "figure", "figcaption", "details", "summary", "caption", "body", "html",
    ]
    /// Elements followed by a blank line.
    private static let paragraphs: Set<String> = ["p", "h1", "h2", "h3", "h4", "h5", "h6"]

    /// The text being built: blanks collapsed, pending line breaks merged.
    private struct Output {
        var text = ""
        var pendingSpace = false
        var pendingBreaks = 0

        mutating func apply(_ tag: Tag) {
            switch tag.name {
            case "br":
                text += "\n"
                pendingSpace = false
            case "hr": requestBreaks(1)
            case "li":
                requestBreaks(1)
                if !tag.closing {
                    flushBreaks()
                    text += "- "
                    pendingSpace = false
                }
            case "td", "th": if !tag.closing { pendingSpace = true }
            case "img":
                // The alternative text stands where the picture was (there is nothing else to read of it).
                if let alt = tag.alt, !alt.isEmpty { self.text(" [\(alt)] ", preformatted: false) }
            default:
                if HTMLText.paragraphs.contains(tag.name) { requestBreaks(2) } else if HTMLText.blocks.contains(tag.name) { requestBreaks(1) }
            }
        }

        mutating func requestBreaks(_ count: Int) {
            pendingBreaks = max(pendingBreaks, count)
            pendingSpace = false
        }

        mutating func flushBreaks() {
            guard pendingBreaks > 0 else { return }
            if !text.isEmpty {
                // Count the line breaks already there, so a <br> before a </p> does not add a third.
                let existing = text.reversed().prefix { $0 == "\n" }.count
                if existing < pendingBreaks { text += String(repeating: "\n", count: pendingBreaks - existing) }
            }
            pendingBreaks = 0
        }

        mutating func text(_ piece: String, preformatted: Bool) {
            for character in piece {
                if preformatted {
                    flushBreaks()
                    text.append(character == "\u{A0}" ? " " : character)
                    continue
                }
                if character.isWhitespace || character == "\u{A0}" {
                    if character == "\u{A0}" {
                        flushBreaks()
                        text.append(" ")
                    } else {
                        pendingSpace = true
                    }
                    continue
                }
                flushBreaks()
                if pendingSpace, let last = text.last, last != "\n", last != " " { text.append(" ") }
                pendingSpace = false
                text.append(character)
            }
        }

        func finished() -> String {
            // Trailing blanks of each line out, at most one blank line in a row, no blank lines at either end.
            var lines: [Substring] = []
            var blank = 0
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let trimmed = line.reversed().drop { $0 == " " || $0 == "\t" }
                let kept = line.prefix(trimmed.count)
                if kept.isEmpty {
                    blank += 1
                    if blank > 1 { continue }
                } else {
                    blank = 0
                }
                lines.append(kept)
            }
            let first = lines.firstIndex { !$0.isEmpty } ?? lines.endIndex
            let last = lines.lastIndex { !$0.isEmpty }.map { $0 + 1 } ?? first
            return lines[first..<max(first, last)].joined(separator: "\n")
        }
    }

    /// A tag: `<name attr=…>`, `</name>`, `<name/>`; attribute values may hold `>` inside quotes.
    private struct Tag {
        var name = ""
        var closing = false
        var selfClosing = false
        var alt: String?
        var end = 0

        init?(_ scalars: [Unicode.Scalar], at start: Int) {
            var index = start + 1
            if index < scalars.count, scalars[index] == "/" {
                closing = true
                index += 1
            }
            guard index < scalars.count else { return nil }
            // `<!DOCTYPE …>`, `<?xml …?>`, `<![CDATA[…]]>`: markup without text.
            if scalars[index] == "!" || scalars[index] == "?" {
                while index < scalars.count, scalars[index] != ">" { index += 1 }
                name = "!"
                end = min(index + 1, scalars.count)
                return
            }
            guard scalars[index].properties.isAlphabetic else { return nil }
            var tagName = ""
            while index < scalars.count, !scalars[index].properties.isWhitespace, scalars[index] != ">", scalars[index] != "/" {
                tagName.unicodeScalars.append(scalars[index])
                index += 1
            }
            name = tagName.lowercased()
            // Attributes, honouring quotes; only `alt` is kept.
            func skipBlanks() { while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 } }
            while true {
                skipBlanks()
                guard index < scalars.count, scalars[index] != ">" else { break }
                if scalars[index] == "/" {
                    selfClosing = index + 1 < scalars.count && scalars[index + 1] == ">"
                    index += 1
                    continue
                }
                var attribute = ""
                while index < scalars.count, !scalars[index].properties.isWhitespace, !"=>/".unicodeScalars.contains(scalars[index]) {
                    attribute.unicodeScalars.append(scalars[index])
                    index += 1
                }
                if attribute.isEmpty {
                    index += 1
                    continue
                }  // a stray "=" or quote
                skipBlanks()
                guard index < scalars.count, scalars[index] == "=" else { continue }
                index += 1
                skipBlanks()
                var value = ""
                if index < scalars.count, scalars[index] == "\"" || scalars[index] == "'" {
                    let quote = scalars[index]
                    index += 1
                    while index < scalars.count, scalars[index] != quote {
                        value.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                    index += 1
                } else {
                    while index < scalars.count, !scalars[index].properties.isWhitespace, scalars[index] != ">" {
                        value.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                }
                if attribute.lowercased() == "alt" { alt = HTMLText.decodeEntities(value) }
            }
            end = min(index + 1, scalars.count)
        }
    }

    /// The index after `<!-- … -->` starting at `start`, nil when there is none there.
    private static func comment(_ scalars: [Unicode.Scalar], at start: Int) -> Int? {
        guard start + 3 < scalars.count, scalars[start + 1] == "!", scalars[start + 2] == "-", scalars[start + 3] == "-" else { return nil }
        var index = start + 4
        while index + 2 < scalars.count {
            if scalars[index] == "-" && scalars[index + 1] == "-" && scalars[index + 2] == ">" { return index + 3 }
            index += 1
        }
        return scalars.count
    }

    /// Entities in an attribute value.
    static func decodeEntities(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var result = ""
        var index = 0
        while index < scalars.count {
            if scalars[index] == "&" {
                let (decoded, end) = entity(scalars, at: index)
                result += decoded
                index = end
            } else {
                result.unicodeScalars.append(scalars[index])
                index += 1
            }
        }
        return result
    }

    /// The entity starting at `start` (its `&`) and the index after it; a lone `&` is itself.
    static func entity(_ scalars: [Unicode.Scalar], at start: Int) -> (String, Int) {
        var index = start + 1
        if index < scalars.count, scalars[index] == "#" {
            index += 1
            var hex = false
            if index < scalars.count, scalars[index] == "x" || scalars[index] == "X" {
                hex = true
                index += 1
            }
            var value: UInt32 = 0
            var digits = 0
            while index < scalars.count, let digit = digitValue(scalars[index], hex: hex) {
                if value < 0x11_0000 { value = value * (hex ? 16 : 10) + UInt32(digit) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return ("&", start + 1) }
            if index < scalars.count, scalars[index] == ";" { index += 1 }
            // As HTML reads them: 0x80–0x9F as Windows-1252, nothing invalid let through.
            if value >= 0x80 && value < 0xA0 { return (Charset.windows1252([UInt8(value)]), index) }
            guard value != 0, let scalar = Unicode.Scalar(value) else { return ("\u{FFFD}", index) }
            return (String(scalar), index)
        }
        var name = ""
        while index < scalars.count, name.unicodeScalars.count < 32,
            scalars[index].properties.isAlphabetic || digitValue(scalars[index], hex: false) != nil
        {
            name.unicodeScalars.append(scalars[index])
            index += 1
        }
        if index < scalars.count, scalars[index] == ";", let value = namedEntities[name] { return (value, index + 1) }
        // The few that browsers accept without a semicolon.
        if let value = namedEntities[name], ["amp", "lt", "gt", "quot", "nbsp", "copy", "reg"].contains(name) { return (value, index) }
        return ("&", start + 1)
    }

    /// An ASCII digit's value (hexadecimal ones when `hex`).
    private static func digitValue(_ scalar: Unicode.Scalar, hex: Bool) -> UInt32? {
        switch scalar {
        case "0"..."9": scalar.value - 0x30
        case "a"..."f" where hex: scalar.value - 0x61 + 10
        case "A"..."F" where hex: scalar.value - 0x41 + 10
        default: nil
        }
    }

    /// Named entities: the HTML 4 set (Latin-1, symbols, Greek, typography) and a few HTML5 names mail uses.
    static let namedEntities: [String: String] = {
        var table: [String: String] = [
            "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "ensp": "\u{2002}", "emsp": "\u{2003}",
            "thinsp": "\u{2009}", "zwnj": "\u{200C}", "zwj": "\u{200D}", "lrm": "\u{200E}", "rlm": "\u{200F}", "ndash": "–", "mdash": "—",
            "lsquo": "‘", "rsquo": "’", "sbquo": "‚", "ldquo": "“", "rdquo": "”", "bdquo": "„", "dagger": "†", "Dagger": "‡",
            "bull": "•", "hellip": "…", "permil": "‰", "prime": "′", "Prime": "″", "lsaquo": "‹", "rsaquo": "›", "oline": "‾",
            "euro": "€", "trade": "™", "larr": "←", "uarr": "↑", "rarr": "→", "darr": "↓", "harr": "↔", "minus": "−", "times": "×",
            "divide": "÷", "infin": "∞", "ne": "≠", "le": "≤", "ge": "≥", "asymp": "≈", "equiv": "≡", "sum": "∑", "prod": "∏",
            "radic": "√", "part": "∂", "int": "∫", "forall": "∀", "exist": "∃", "isin": "∈", "and": "∧", "or": "∨", "cap": "∩",
            "cup": "∪", "sdot": "⋅", "loz": "◊", "spades": "♠", "clubs": "♣", "hearts": "♥", "diams": "♦", "circ": "ˆ", "tilde": "˜",
            "OElig": "Œ", "oelig": "œ", "Scaron": "Š", "scaron": "š", "Yuml": "Ÿ", "fnof": "ƒ", "shy": "\u{AD}", "check": "✓",
            "star": "☆", "starf": "★", "hyphen": "‐", "dash": "‐", "nbhy": "\u{2011}", "numsp": "\u{2007}", "puncsp": "\u{2008}",
            "hairsp": "\u{200A}", "ZeroWidthSpace": "\u{200B}", "NewLine": "\n", "Tab": "\t", "colon": ":", "comma": ",",
            "period": ".", "excl": "!", "quest": "?", "num": "#", "dollar": "$", "percnt": "%", "lpar": "(", "rpar": ")",
            "ast": "*", "plus": "+", "sol": "/", "semi": ";", "equals": "=", "commat": "@", "lsqb": "[", "rsqb": "]", "bsol": "\\",
            "lowbar": "_", "grave": "`", "lcub": "{", "rcub": "}", "verbar": "|", "vert": "|",
        ]
        // ISO 8859-1 names for U+00A1–U+00FF, in order.
        let latin1 = [
            "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf", "laquo", "not", "shy", "reg",
            "macr", "deg", "plusmn", "sup2", "sup3", "acute", "micro", "para", "middot", "cedil", "sup1", "ordm", "raquo",
            "frac14", "frac12", "frac34", "iquest", "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig",
            "Ccedil", "Egrave", "Eacute", "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve",
            "Oacute", "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute", "THORN",
            "szlig", "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil", "egrave", "eacute", "ecirc",
            "euml", "igrave", "iacute", "icirc", "iuml", "eth", "ntilde", "ograve", "oacute", "ocirc", "otilde", "ouml",
            "divide", "oslash", "ugrave", "uacute", "ucirc", "uuml", "yacute", "thorn", "yuml",
        ]
        for (offset, name) in latin1.enumerated() { table[name] = String(Unicode.Scalar(UInt8(0xA1 + offset))) }
        // Greek letters.
        let greek = [
            "Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota", "Kappa", "Lambda", "Mu", "Nu", "Xi",
            "Omicron", "Pi", "Rho", "", "Sigma", "Tau", "Upsilon", "Phi", "Chi", "Psi", "Omega",
        ]
        for (offset, name) in greek.enumerated() where !name.isEmpty {
            table[name] = String(Unicode.Scalar(UInt32(0x391 + offset))!)
            table[name.lowercased()] = String(Unicode.Scalar(UInt32(0x3B1 + offset))!)
        }
        table["sigmaf"] = "ς"
        return table
    }()
}
