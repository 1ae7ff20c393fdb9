import Foundation

/// Checks on JSON request bodies that hold whatever parser a route then uses.
public enum JSONInput {
    /// The paths (`email`, `devices[0].imei`) of every member name or string value holding U+0000, sorted; empty for
    /// most bodies at the cost of one byte scan, since the tree is only walked when the escape `\u0000` appears.
    public static func fieldsHoldingNUL(_ body: [UInt8]) -> [String] {
        // A raw NUL byte is not JSON at all (the parser answers 400); in JSON text U+0000 can only be this escape.
        guard containsNULEscape(body),
              let root = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else { return [] }
        var found: [String] = []
        walk(root, path: [], into: &found)
        return found.sorted()
    }

    /// A coding path as the client would spell the field: keys joined by dots, array indices in brackets.
    public static func fieldName(_ path: [any CodingKey]) -> String {
        name(path.map { key in key.intValue.map(PathComponent.index) ?? .key(key.stringValue) })
    }

    enum PathComponent {
        case key(String)
        case index(Int)
    }

    static func name(_ path: [PathComponent]) -> String {
        var text = ""
        for component in path {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    private static func walk(_ value: Any, path: [PathComponent], into found: inout [String]) {
        switch value {
        case let text as String:
            if text.unicodeScalars.contains("\u{0}") { found.append(name(path)) }
        case let array as [Any]:
            for (index, item) in array.enumerated() { walk(item, path: path + [.index(index)], into: &found) }
        case let object as [String: Any]:
            for (key, item) in object {
                if key.unicodeScalars.contains("\u{0}") { found.append(name(path + [.key(key)])) }
                walk(item, path: path + [.key(key)], into: &found)
            }
        default:
            break
        }
    }

    // `\u0000`; a preceding escaped backslash (`\\u0000`) also matches, and the walk then finds nothing.
    private static func containsNULEscape(_ body: [UInt8]) -> Bool {
        let needle: [UInt8] = Array(#"\u0000"#.utf8)
        guard body.count >= needle.count else { return false }
        var index = 0
        while let start = body[index...].firstIndex(of: 0x5C) {
            if start + needle.count <= body.count, body[start..<(start + needle.count)].elementsEqual(needle) { return true }
            index = start + 1
        }
        return false
    }
}
