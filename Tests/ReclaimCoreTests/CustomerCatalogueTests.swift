import Foundation
import Testing

@testable import ReclaimCore

/// The customer's sentences: every key in every language, whole sentences with the same named placeholders.
@Suite struct CustomerCatalogueTests {
    @Test func everyKeyInEveryLanguageWithTheSamePlaceholders() throws {
        for language in CustomerLanguage.allCases {
            let catalogue = CustomerCatalogue.catalogue(language)
            #expect(Set(catalogue.keys) == Set(CustomerText.allCases), "\(language) misses \(Set(CustomerText.allCases).subtracting(catalogue.keys))")
            for key in CustomerText.allCases {
                let template = try #require(catalogue[key])
                #expect(!template.trimmingCharacters(in: .whitespaces).isEmpty)
                #expect(Self.placeholders(template) == key.placeholders, "\(language) \(key.rawValue)")
            }
        }
    }

    @Test func chineseCataloguesAreTranslationsNotCopies() {
        for key in CustomerText.allCases {
            let en = CustomerCatalogue.english[key]!
            let hans = CustomerCatalogue.simplifiedChinese[key]!
            let hant = CustomerCatalogue.traditionalChinese[key]!
            #expect(hans != en && hant != en, "\(key.rawValue)")
            // Only a word written alike in both scripts may be the same.
            #expect(hans != hant || key == .progressReceived, "\(key.rawValue)")
            // Chinese sentences are written in Han characters (an untranslated English sentence would have none).
            #expect(hans.unicodeScalars.contains { $0.properties.isIdeographic } && hant.unicodeScalars.contains { $0.properties.isIdeographic })
        }
        // Traditional is its own text, not Simplified in other characters: Taiwan terms where they differ.
        #expect(CustomerCatalogue.traditionalChinese[.nextWaitEngineeringLock]!.contains("啟用鎖定"))
        #expect(CustomerCatalogue.simplifiedChinese[.nextWaitEngineeringLock]!.contains("激活锁"))
        #expect(CustomerCatalogue.traditionalChinese[.stageIdentityCheck]!.contains("帳號"))
        #expect(CustomerCatalogue.simplifiedChinese[.stageIdentityCheck]!.contains("账户"))
    }

    /// No sentence is assembled from translated fragments: every text the guidance produces, in every language, is
    /// exactly one catalogue template with only the (untranslated) contact filled in.
    @Test func everySentenceIsOneWholeTemplate() {
        let contact = "+86 400 000 0000"
        for language in CustomerLanguage.allCases {
            let templates = Set(CustomerCatalogue.catalogue(language).values.map { $0.replacingOccurrences(of: "{contact}", with: contact) })
            for state in CaseState.allCases {
                for path in RecoveryPath.allCases {
                    for facts in [CaseFacts(), CaseFacts(twoStepEnabled: true)] {
                        let g = CustomerGuidance(state: state, path: path, kind: .accountTakeover, facts: facts, evidence: [])
                        let texts = [g.stage, g.nextStep] + g.missing.map(\.text) + g.progress.map(\.label) + g.notices
                        for text in texts { #expect(templates.contains(text.text(language, contact: contact)), "\(language) \(text.rawValue)") }
                    }
                }
            }
        }
        #expect(!CustomerText.nextClosed.text(.traditionalChinese, contact: contact).contains("{"))
    }

    /// api.md v1.3: the support contact may be an e-mail address, so no sentence that names it asks to "call" it.
    @Test func noSentenceAsksToCallTheSupportContact() {
        for key in CustomerText.allCases where key.placeholders.contains("contact") {
            let en = CustomerCatalogue.english[key]!.lowercased()
            #expect(en.range(of: #"\bcall\b"#, options: .regularExpression) == nil, "\(key.rawValue)")
            #expect(!CustomerCatalogue.simplifiedChinese[key]!.contains("致电"), "\(key.rawValue)")
            #expect(!CustomerCatalogue.traditionalChinese[key]!.contains("致電"), "\(key.rawValue)")
        }
        #expect(CustomerText.stopDone.text(.english, contact: "help@reclaim.test").contains("Contact our support team at help@reclaim.test"))
    }

    @Test func languageFromTheRequestThenTheCaseThenAcceptLanguage() {
        #expect(CustomerLanguage.negotiate(requested: .traditionalChinese, caseLanguage: .english, acceptLanguage: "zh-CN") == .traditionalChinese)
        #expect(CustomerLanguage.negotiate(requested: nil, caseLanguage: .simplifiedChinese, acceptLanguage: "en") == .simplifiedChinese)
        #expect(CustomerLanguage.negotiate(requested: nil, caseLanguage: nil, acceptLanguage: "zh-CN,zh;q=0.9,en;q=0.8") == .simplifiedChinese)
        #expect(CustomerLanguage.negotiate(requested: nil, caseLanguage: nil, acceptLanguage: "fr-FR, zh-TW;q=0.5, en;q=0.4") == .traditionalChinese)
        #expect(CustomerLanguage.negotiate(requested: nil, caseLanguage: nil, acceptLanguage: "fr, de") == .english)
        #expect(CustomerLanguage.negotiate(requested: nil, caseLanguage: nil, acceptLanguage: nil) == .english)
        #expect(CustomerLanguage(acceptLanguage: "en;q=0.2, zh-HK;q=0.9") == .traditionalChinese)
        #expect(CustomerLanguage(acceptLanguage: "zh-Hant-TW;q=0, en") == .english)
        #expect(CustomerLanguage(tag: "zh-Hans-SG") == .simplifiedChinese && CustomerLanguage(tag: "zh_TW") == .traditionalChinese)
        #expect(CustomerLanguage(tag: "zh-MO") == .traditionalChinese && CustomerLanguage(tag: "zh") == .simplifiedChinese)
        #expect(CustomerLanguage(tag: "en-GB") == .english && CustomerLanguage(tag: "ja") == nil)
    }

    @Test func mailGoesInTheCasesLanguageElseEnglish() {
        #expect(CustomerLanguage.ofMail(caseLanguage: .traditionalChinese) == .traditionalChinese)
        #expect(CustomerLanguage.ofMail(caseLanguage: nil) == .english)
    }

    static func placeholders(_ template: String) -> Set<String> {
        var names = Set<String>()
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                names.insert("unclosed")
                break
            }
            names.insert(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }
}
