/// Content-Transfer-Encoding decoders as lenient as real mail needs: neither ever fails.
public enum TransferEncoding {
    /// Base64, skipping whitespace and every byte outside the alphabet; padding may be missing, short or in the
    /// middle (concatenated chunks decode one after the other); a lone trailing sextet is dropped.
    public static func base64<Bytes: Collection>(_ input: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        input.withContiguousStorageIfAvailable(decodeBase64) ?? Array(input).withUnsafeBufferPointer(decodeBase64)
    }

    private static func decodeBase64(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        let capacity = input.count / 4 * 3 + 3
        return [UInt8](unsafeUninitializedCapacity: capacity) { output, written in
            base64Values.withUnsafeBufferPointer { table in
                var accumulator: UInt32 = 0
                var count = 0
                var length = 0
                for byte in input {
                    let value = table[Int(byte)]
                    if value == 0xFF {
                        guard byte == UInt8(ascii: "=") else { continue }
                        // Padding ends a quantum: 2 sextets carry one byte, 3 carry two, one alone carries nothing.
                        if count == 2 {
                            output[length] = UInt8(truncatingIfNeeded: accumulator >> 4)
                            length += 1
                        } else if count == 3 {
                            output[length] = UInt8(truncatingIfNeeded: accumulator >> 10)
                            output[length + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
                            length += 2
                        }
                        accumulator = 0
                        count = 0
                        continue
                    }
                    accumulator = accumulator << 6 | UInt32(value)
                    count += 1
                    if count == 4 {
                        output[length] = UInt8(truncatingIfNeeded: accumulator >> 16)
                        output[length + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                        output[length + 2] = UInt8(truncatingIfNeeded: accumulator)
                        length += 3
                        accumulator = 0
                        count = 0
                    }
                }
                if count == 2 {
                    output[length] = UInt8(truncatingIfNeeded: accumulator >> 4)
                    length += 1
                } else if count == 3 {
                    output[length] = UInt8(truncatingIfNeeded: accumulator >> 10)
                    output[length + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
                    length += 2
                }
                written = length
            }
        }
    }

    /// Quoted-printable: `=XX` (either case), soft line breaks (`=` at a line end, after trailing blanks too),
    /// trailing blanks removed; a malformed `=` stays as it is. Line breaks are kept as they came (CRLF or LF).
    public static func quotedPrintable<Bytes: Collection>(_ input: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let bytes = Array(input)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        var pendingBlanks = 0  // blanks not yet written: dropped if the line ends after them
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 {
                pendingBlanks += 1
                index += 1
                continue
            }
            if byte == 0x0D || byte == 0x0A {
                pendingBlanks = 0
                output.append(byte)
                index += 1
                continue
            }
            if pendingBlanks > 0 {
                output.append(contentsOf: bytes[(index - pendingBlanks)..<index])
                pendingBlanks = 0
            }
            guard byte == UInt8(ascii: "=") else {
                output.append(byte)
                index += 1
                continue
            }
            if index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
                continue
            }
            // A soft line break: "=" then optional blanks then CRLF, LF or the end.
            var next = index + 1
            while next < bytes.count, bytes[next] == 0x20 || bytes[next] == 0x09 { next += 1 }
            if next == bytes.count {
                index = next
                continue
            }
            if bytes[next] == 0x0A {
                index = next + 1
                continue
            }
            if bytes[next] == 0x0D {
                index = next + 1
                if index < bytes.count, bytes[index] == 0x0A { index += 1 }
                continue
            }
            output.append(byte)
            index += 1
        }
        return output
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// The sextet of each byte, 0xFF outside the alphabet (the URL-safe `-` and `_` are read too).
    private static let base64Values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()
}
