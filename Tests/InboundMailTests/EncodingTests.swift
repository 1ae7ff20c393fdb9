import Foundation
import InboundMail
import Testing

@Suite("Transfer encodings, charsets and RFC 2231 parameters")
struct EncodingTests {
    @Test func base64IsLenient() {
        let expected = bytes("Hello, world")
        #expect(TransferEncoding.base64(bytes("SGVsbG8sIHdvcmxk")) == expected)
        #expect(TransferEncoding.base64(bytes("SGVs\r\nbG8s IHdv\tcmxk\r\n")) == expected)  // whitespace anywhere
        #expect(TransferEncoding.base64(bytes("SGVsbG8sIHdvcmxk====")) == expected)  // too much padding
        #expect(TransferEncoding.base64(bytes("SGVsbG8")) == bytes("Hello"))  // none where it was due
        #expect(TransferEncoding.base64(bytes("SGk=SGk=")) == bytes("HiHi"))  // concatenated chunks
        #expect(TransferEncoding.base64(bytes("SG!k*")) == bytes("Hi"))  // bytes outside the alphabet
        #expect(TransferEncoding.base64(bytes("SGkx\u{0}Q")) == bytes("Hi1"))  // a lone last sextet is dropped
        #expect(TransferEncoding.base64([]) == [])
        // Every byte value round-trips through Foundation's encoder.
        let all = (0...255).map(UInt8.init)
        #expect(TransferEncoding.base64(bytes(Data(all).base64EncodedString(options: .lineLength76Characters))) == all)
    }

    @Test func quotedPrintable() {
        #expect(TransferEncoding.quotedPrintable(bytes("caf=C3=A9 =e2=80=94 ok")) == bytes("café — ok"))
        #expect(TransferEncoding.quotedPrintable(bytes("soft=\r\nbreak and=  \r\nblanks=\nlf=")) == bytes("softbreak andblankslf"))
        #expect(TransferEncoding.quotedPrintable(bytes("trailing   \r\nblanks\t\r\n")) == bytes("trailing\r\nblanks\r\n"))
        #expect(TransferEncoding.quotedPrintable(bytes("a = b =XY =4")) == bytes("a = b =XY =4"))  // malformed "=" kept
        #expect(TransferEncoding.quotedPrintable(bytes("inner  blanks stay")) == bytes("inner  blanks stay"))
    }

    @Test func charsets() {
        let chinese = "案件编号：𠮷田，谢谢！"
        #expect(Charset.decode(Array(chinese.utf8), label: "UTF-8") == chinese)
        #expect(Charset.decode(bytes("plain"), label: "US-ASCII") == "plain")
        // ISO-8859-1 and Windows-1252 (read as 1252, as mail readers do).
        #expect(Charset.decode([0x63, 0x61, 0x66, 0xE9], label: "iso-8859-1") == "café")
        #expect(Charset.decode([0x93, 0x71, 0x94, 0x20, 0x96, 0x20, 0x80], label: "windows-1252") == "“q” – €")
        // GB2312 text, GBK text, and GB18030's four-byte sequences, whatever the label says among the three.
        #expect(Charset.decode([0xC4, 0xE3, 0xBA, 0xC3], label: "gb2312") == "你好")
        #expect(Charset.decode([0x81, 0x40], label: "GBK") == "丂")
        #expect(Charset.decode([0x95, 0x34, 0xB2, 0x35], label: "gb2312") == "𠮷")
        #expect(Charset.decode([0x81, 0x30, 0x81, 0x30], label: "GB18030") == "\u{80}")
        // Big5 (and its HKSCS extension under the plain label).
        #expect(Charset.decode([0xA7, 0x41, 0xA6, 0x6E], label: "big5") == "你好")
        #expect(Charset.decode([0xB3, 0xAF, 0xAC, 0xFC, 0xAC, 0xC2], label: "Big5") == "陳美玲")
        // Undecodable bytes become U+FFFD and decoding goes on; an unknown label reads UTF-8, then Windows-1252.
        #expect(Charset.decode([0xC4, 0xE3, 0xFF, 0xBA, 0xC3], label: "gb18030") == "你\u{FFFD}好")
        #expect(Charset.decode([0xC4], label: "gb18030") == "\u{FFFD}")
        #expect(Charset.decode(Array("ok é".utf8), label: "x-no-such-charset") == "ok é")
        #expect(Charset.decode([0x6F, 0x6B, 0xE9], label: "x-no-such-charset") == "oké")
        #expect(Charset.decode([0x6F, 0x6B, 0xE9], label: nil) == "oké")
        // A label trying to pass iconv options is not passed on.
        #expect(Charset.decode(bytes("x"), label: "UTF-8//TRANSLIT") == "x")
        // Other iconv charsets work too.
        #expect(Charset.decode([0x82, 0xA0], label: "shift_jis") == "あ")
        #expect(Charset.decode([0xC1, 0xD7], label: "koi8-r") == "ав")
    }

    @Test func rfc2231Parameters() {
        func field(_ text: String) -> ContentField { ContentField(parsing: bytes(text)) }
        #expect(field("attachment; filename*=UTF-8''Quittung%20f%C3%BCr.jpg")["filename"] == "Quittung für.jpg")
        #expect(field("attachment; filename*=gbk'zh-cn'%C4%E3%BA%C3.pdf")["filename"] == "你好.pdf")
        // Continuations, out of order, one character split between two pieces, extended and plain pieces mixed.
        #expect(field("attachment; filename*1*=%BA%C3.pdf; filename*0*=GBK''%C4%E3")["filename"] == "你好.pdf")
        #expect(field("attachment; filename*0*=utf-8''%E4%BD; filename*1*=%A0; filename*2=.txt")["filename"] == "你.txt")
        #expect(field("attachment; filename*0=\"long name \"; filename*1=\"in pieces.pdf\"")["filename"] == "long name in pieces.pdf")
        // filename* is preferred to filename; RFC 2047 inside quotes (Outlook, Gmail) is decoded.
        #expect(field("attachment; filename=\"fallback.pdf\"; filename*=UTF-8''real.pdf")["filename"] == "real.pdf")
        #expect(field("attachment; filename=\"=?UTF-8?B?5Y+R56Wo?=.pdf\"")["filename"] == "发票.pdf")
        // Quoting, escapes, an unquoted name with blanks, case, comments.
        let type = field("Text/HTML (a comment); CHARSET=\"utf-8\"; Name=\"a \\\"b\\\".html\"")
        #expect(type.value == "text/html")
        #expect(type["charset"] == "utf-8")
        #expect(type["name"] == "a \"b\".html")
        #expect(field("attachment; filename=my file.pdf ; size=3")["filename"] == "my file.pdf")
        #expect(field("multipart/mixed;\r\n\tboundary=\"----=_Part_1\"")["boundary"] == "----=_Part_1")
        #expect(field("").value == "" && field(";;;=;a=").parameters == ["a": ""])
    }
}
