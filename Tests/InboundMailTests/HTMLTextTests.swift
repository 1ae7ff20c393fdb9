import InboundMail
import Testing

@Suite("HTML to text (never rendered)")
struct HTMLTextTests {
    @Test func tagsGoTextStays() {
        #expect(HTMLText.text("<b>bold</b> and <i>italic</i> <span style=\"a>b\">here</span>") == "bold and italic here")
        #expect(HTMLText.text("a < b and c > d, 1<2") == "a < b and c > d, 1<2")
    }

    @Test func scriptStyleHeadTitleAndCommentsAreDropped() {
        let html =
            "<html><head><title>T</title><style>p { color: red }</style></head><body><script>alert('x<p>')</script>"
            + "<!-- hidden <b>x</b> --><p>visible</p><noscript>no script</noscript></body></html>"
        #expect(HTMLText.text(html) == "visible\n\nno script")
        // A head never closed ends at <body>.
        #expect(HTMLText.text("<head><meta charset=utf-8><body>text") == "text")
        #expect(HTMLText.text("<!DOCTYPE html><?xml version=\"1.0\"?>x") == "x")
    }

    @Test func blocksBreakLines() {
        #expect(HTMLText.text("<div>one</div><div>two</div>three<br>four<br/><p>para</p><p>graph</p>") == "one\ntwo\nthree\nfour\n\npara\n\ngraph")
        #expect(HTMLText.text("<ul><li>a</li><li>b</li></ul><ol><li>c</ol>") == "- a\n- b\n- c")
        #expect(HTMLText.text("<table><tr><td>IMEI</td><td>3569</td></tr><tr><th>Serial</th><td>C02</td></tr></table>") == "IMEI 3569\nSerial C02")
        #expect(HTMLText.text("<h1>Title</h1>text<hr>after") == "Title\n\ntext\nafter")
        #expect(HTMLText.text("<p>a<br></p><p>b</p>") == "a\n\nb")
    }

    @Test func whitespaceCollapsesExceptInPre() {
        #expect(HTMLText.text("  many \n\n   blanks\t here  ") == "many blanks here")
        #expect(HTMLText.text("<pre>  keep\n   this</pre>") == "  keep\n   this")
    }

    @Test func entities() {
        #expect(
            HTMLText.text("&amp; &lt;tag&gt; &quot;q&quot; &apos;a&apos; &eacute;&Auml;&szlig; &euro; &hellip; &mdash;")
                == "& <tag> \"q\" 'a' éÄß € … —")
        #expect(HTMLText.text("&#233; &#xE9; &#X1F4F7; &#150; &#0; &#xD800; &#99999999;") == "é é 📷 – \u{FFFD} \u{FFFD} \u{FFFD}")
        #expect(HTMLText.text("a&nbsp;b &amp c &copy 2026 &unknown; & alone &") == "a b & c © 2026 &unknown; & alone &")
        #expect(HTMLText.text("&yuml;&iexcl;&Omega;&omega;&sigmaf;") == "ÿ¡Ωως")
    }

    @Test func imagesLeaveTheirAlternativeText() {
        #expect(HTMLText.text("see <img src=\"cid:x\" alt=\"receipt &amp; box\"> here <img src=x>") == "see [receipt & box] here")
    }

    @Test func brokenMarkupNeverTraps() {
        for html in [
            "<", "<<>>", "</", "<a", "<a href=\"unterminated", "<!--", "&#", "&#x", "&", "<script>never closed", "<p/><br///>", "<\u{301}x>",
        ] {
            _ = HTMLText.text(html)
        }
        #expect(HTMLText.text("<script>never closed") == "")
    }
}
