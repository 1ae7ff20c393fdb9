import ReclaimStore
import Testing

/// The name tokens `q` is matched by: pure, no database.
@Suite struct CaseSearchTests {
    @Test func hanRunsGiveTheirBigramsAndOtherScriptsTheirFoldedWords() {
        #expect(CaseSearch.nameTokens("王小明") == ["~王小", "~小明"])
        #expect(CaseSearch.nameTokens("李") == [], "one character is no fragment")
        #expect(CaseSearch.nameTokens("José Álvarez-Núñez") == ["~jose", "~alvarez", "~nunez"])
        #expect(CaseSearch.nameTokens("Chan 陈大文") == ["~chan", "~陈大", "~大文"])
        #expect(CaseSearch.nameTokens("陈大文Chan") == ["~陈大", "~大文", "~chan"], "a script change ends a run")
        #expect(CaseSearch.nameTokens("Ａｎｎ J. O'Brien") == ["~ann", "~brien"], "full width folded; one letter is no word")
        #expect(CaseSearch.nameTokens("") == [])
    }

    @Test func aQueryIsItsExactTermAndItsNameTokens() {
        #expect(CaseSearch.query(for: "小明") == CaseSearchQuery(term: "小明", nameTokens: ["~小明"]))
        #expect(CaseSearch.query(for: " Ann.Smith@Mail.test ") == CaseSearchQuery(term: "ann.smith@mail.test", nameTokens: []))
        #expect(CaseSearch.query(for: "C02X-K1ZJ") == CaseSearchQuery(term: "C02XK1ZJ", nameTokens: ["~c02x", "~k1zj"]))
        #expect(CaseSearch.query(for: String(repeating: "a", count: 300)) == nil)
        #expect(CaseSearch.query(for: "a b c d e f g h i j kk ll mm nn oo pp qq rr ss")?.nameTokens.count == 8)
    }

    @Test func indexTermsAreTheIdentityTermsTheContactAndTheName() {
        let terms = CaseSearch.indexTerms(
            number: "100000000001", accountEmail: "A@Example.com", contactEmail: "Home@Example.net", name: "王小明", devices: [])
        #expect(terms == ["100000000001", "a@example.com", "home@example.net", "~王小", "~小明"])
        #expect(
            CaseSearch.terms(number: "100000000001", accountEmail: "A@Example.com", devices: []) == ["100000000001", "a@example.com"],
            "a duplicate is never found by a name")
    }
}
