import ReclaimCore
import ReclaimOperations

/// Every sentence a customer mail contains, once per language (en, zh-Hans, zh-Hant): the one place to translate.
/// Mails after the first carry no secret and nothing about the case beyond its state.
public enum MailText {
    /// The subject line of a mail.
    public static func subject(_ kind: CustomerMailKind, caseNumber: String, language: CustomerLanguage) -> String {
        switch (kind, language) {
        case (.caseOpened, .english): "Your case \(caseNumber) is open"
        case (.caseOpened, .simplifiedChinese): "您的案件 \(caseNumber) 已受理"
        case (.caseOpened, .traditionalChinese): "您的案件 \(caseNumber) 已受理"
        case (.accessCodeReissued, .english): "A new access code for case \(caseNumber)"
        case (.accessCodeReissued, .simplifiedChinese): "案件 \(caseNumber) 的新访问码"
        case (.accessCodeReissued, .traditionalChinese): "案件 \(caseNumber) 的新存取碼"
        case (.stateChanged, .english), (.merged, .english): "Your case \(caseNumber) has moved"
        case (.stateChanged, .simplifiedChinese), (.merged, .simplifiedChinese): "您的案件 \(caseNumber) 有了进展"
        case (.stateChanged, .traditionalChinese), (.merged, .traditionalChinese): "您的案件 \(caseNumber) 有了進展"
        case (.documentsRequested, .english): "Case \(caseNumber): we need documents from you"
        case (.documentsRequested, .simplifiedChinese): "案件 \(caseNumber)：我们需要您提供文件"
        case (.documentsRequested, .traditionalChinese): "案件 \(caseNumber)：我們需要您提供文件"
        case (.customerNote, .english): "Case \(caseNumber): a new message for you"
        case (.customerNote, .simplifiedChinese): "案件 \(caseNumber)：您有一条新消息"
        case (.customerNote, .traditionalChinese): "案件 \(caseNumber)：您有一則新訊息"
        case (.documentRejected, .english): "Case \(caseNumber): we could not accept a document"
        case (.documentRejected, .simplifiedChinese): "案件 \(caseNumber)：您的一份材料未能通过审核"
        case (.documentRejected, .traditionalChinese): "案件 \(caseNumber)：您的一份文件未通過審核"
        case (.contactChanged, .english): "Case \(caseNumber): the contact address was changed"
        case (.contactChanged, .simplifiedChinese): "案件 \(caseNumber)：联系邮箱已更改"
        case (.contactChanged, .traditionalChinese): "案件 \(caseNumber)：聯絡電子郵件地址已變更"
        case (.unlockScheduled, .english): "Case \(caseNumber): a change to the account is scheduled — stop it if this wasn't you"
        case (.unlockScheduled, .simplifiedChinese): "案件 \(caseNumber)：账户即将被更改——如果不是您本人，请立即停止"
        case (.unlockScheduled, .traditionalChinese): "案件 \(caseNumber)：帳號即將被變更——如果不是您本人，請立即停止"
        case (.callerCode, .english): "Case \(caseNumber): your one-time code for our call"
        case (.callerCode, .simplifiedChinese): "案件 \(caseNumber)：本次通话的一次性验证码"
        case (.callerCode, .traditionalChinese): "案件 \(caseNumber)：本次通話的一次性驗證碼"
        }
    }

    /// The greeting line.
    static func greeting(_ language: CustomerLanguage) -> String {
        switch language {
        case .english: "Hello,"
        case .simplifiedChinese: "您好："
        case .traditionalChinese: "您好："
        }
    }

    /// The sentence that says what happened (`newAddress`: the new contact address, masked, for `contactChanged`).
    static func news(_ kind: CustomerMailKind, caseNumber: String, language: CustomerLanguage, newAddress: String = "") -> String {
        switch (kind, language) {
        // No promise of what the case will achieve: that is the status page's to say (next step, notices), by its path.
        case (.caseOpened, .english): "We have opened case \(caseNumber) for you."
        case (.caseOpened, .simplifiedChinese): "我们已为您开立案件 \(caseNumber)。"
        case (.caseOpened, .traditionalChinese): "我們已為您開立案件 \(caseNumber)。"
        case (.accessCodeReissued, .english): "An agent has issued a new access code for case \(caseNumber). The old code no longer works."
        case (.accessCodeReissued, .simplifiedChinese): "客服人员已为案件 \(caseNumber) 签发新的访问码，旧访问码已失效。"
        case (.accessCodeReissued, .traditionalChinese): "客服人員已為案件 \(caseNumber) 簽發新的存取碼，舊存取碼已失效。"
        case (.stateChanged, .english): "There is news on case \(caseNumber)."
        case (.stateChanged, .simplifiedChinese): "案件 \(caseNumber) 有了新进展。"
        case (.stateChanged, .traditionalChinese): "案件 \(caseNumber) 有了新進展。"
        case (.merged, .english):
            "Case \(caseNumber) has been joined with another case of yours, which we now follow; your access code still works and shows where it stands."
        case (.merged, .simplifiedChinese): "案件 \(caseNumber) 已与您的另一个案件合并，我们将在该案件中继续处理；您的访问码仍然有效，可查看其进度。"
        case (.merged, .traditionalChinese): "案件 \(caseNumber) 已與您的另一個案件合併，我們將在該案件中繼續處理；您的存取碼仍然有效，可查看其進度。"
        case (.documentsRequested, .english): "To continue with case \(caseNumber) we need documents from you. The status page lists them."
        case (.documentsRequested, .simplifiedChinese): "为继续处理案件 \(caseNumber)，我们需要您提供文件，状态页面列出了所需文件。"
        case (.documentsRequested, .traditionalChinese): "為繼續處理案件 \(caseNumber)，我們需要您提供文件，狀態頁面列出了所需文件。"
        case (.customerNote, .english): "Our support team has left a message for you on case \(caseNumber). Read it on the status page."
        case (.customerNote, .simplifiedChinese): "客服团队在案件 \(caseNumber) 中给您留了言，请在状态页面查看。"
        case (.customerNote, .traditionalChinese): "客服團隊在案件 \(caseNumber) 中給您留了言，請在狀態頁面查看。"
        case (.documentRejected, .english):
            "We could not accept a document you sent for case \(caseNumber). The status page shows which one and what to send instead."
        case (.documentRejected, .simplifiedChinese): "您为案件 \(caseNumber) 提交的一份材料未能通过审核。状态页面会显示是哪一份，以及应改为提交什么。"
        case (.documentRejected, .traditionalChinese): "您為案件 \(caseNumber) 提交的一份文件未通過審核。狀態頁面會顯示是哪一份，以及應改為提交什麼。"
        case (.contactChanged, .english):
            "The contact address for case \(caseNumber) was changed to \(newAddress). Mail about the case now goes there, not to this address."
        case (.contactChanged, .simplifiedChinese): "案件 \(caseNumber) 的联系邮箱已改为 \(newAddress)。今后有关该案件的邮件将发往该地址，不再发往本邮箱。"
        case (.contactChanged, .traditionalChinese): "案件 \(caseNumber) 的聯絡電子郵件地址已改為 \(newAddress)。今後有關該案件的郵件將寄往該地址，不再寄往本信箱。"
        case (.unlockScheduled, .english):
            "Our support team has recorded a change to the account of case \(caseNumber). You are receiving this at every address we have for the account."
        case (.unlockScheduled, .simplifiedChinese): "我们的客服已为案件 \(caseNumber) 的账户记录了一项更改。我们已向该账户登记的每个邮箱发送此通知。"
        case (.unlockScheduled, .traditionalChinese): "我們的客服已為案件 \(caseNumber) 的帳號記錄了一項變更。我們已向該帳號登記的每個電子郵件地址寄出此通知。"
        case (.callerCode, .english):
            "An agent on the phone about case \(caseNumber) asked us to send you this code, to check that they are speaking with you."
        case (.callerCode, .simplifiedChinese): "正在就案件 \(caseNumber) 与您通话的客服请我们向您发送此验证码，以确认对方正在与您本人通话。"
        case (.callerCode, .traditionalChinese): "正在就案件 \(caseNumber) 與您通話的客服請我們寄送此驗證碼給您，以確認對方正在與您本人通話。"
        }
    }

    /// What to do if the change was not theirs (the contact-changed mail): contact support, whose contact is given
    /// (an address or a number, so never "call").
    static func notYouLine(_ supportContact: String, language: CustomerLanguage) -> String {
        switch language {
        case .english: "If you did not ask for this, contact support at once: \(supportContact)."
        case .simplifiedChinese: "如果这不是您本人要求的，请立即联系客服：\(supportContact)。"
        case .traditionalChinese: "如果這不是您本人要求的，請立即聯絡客服：\(supportContact)。"
        }
    }

    /// When the scheduled change takes effect (UTC: the mail cannot know the reader's zone).
    static func effectiveLine(_ when: String, language: CustomerLanguage) -> String {
        switch language {
        case .english: "It takes effect on \(when) (UTC) unless it is stopped first."
        case .simplifiedChinese: "除非事先停止，此更改将于 \(when)（UTC）生效。"
        case .traditionalChinese: "除非事先停止，此變更將於 \(when)（UTC）生效。"
        }
    }

    /// The "this wasn't me" link.
    static func stopLine(_ url: String, language: CustomerLanguage) -> String {
        switch language {
        case .english: "If you did not ask for this, stop it now (nobody will ask you to pay or to sign in): \(url)"
        case .simplifiedChinese: "如果这不是您本人要求的，请立即停止（无需付款，也无需登录）：\(url)"
        case .traditionalChinese: "如果這不是您本人要求的，請立即停止（無需付款，也無需登入）：\(url)"
        }
    }

    /// The notice of a scheduled unlock: what will be undone, when, the stop link, whom to contact, never pay.
    public static func unlockNotice(
        caseNumber: String, step: UnlockKind?, effectiveAt: String, stopURL: String, language: CustomerLanguage, contact: String,
        notices: [CustomerText]
    ) -> String {
        var lines = [greeting(language), "", news(.unlockScheduled, caseNumber: caseNumber, language: language)]
        if let step { lines += ["", "• " + step.customerText.text(language, contact: contact)] }
        lines += [effectiveLine(effectiveAt, language: language), "", stopLine(stopURL, language: language), notYouLine(contact, language: language)]
        lines += notices.flatMap { ["", $0.text(language, contact: contact)] }
        lines += ["", "-- ", signature(language)]
        return lines.joined(separator: "\n")
    }

    /// The one-time code line: what it is for, until when (UTC), and to whom alone it may be read.
    static func callerCodeLine(_ code: String, expiresAt: String, language: CustomerLanguage) -> String {
        switch language {
        case .english:
            "Your code: \(code)\nIt works until \(expiresAt) (UTC). Read it only to the agent you are on the phone with about this case; we never ask for it otherwise."
        case .simplifiedChinese: "您的验证码：\(code)\n有效期至 \(expiresAt)（UTC）。只可念给正在就此案件与您通话的客服；除此之外我们绝不会向您索取。"
        case .traditionalChinese: "您的驗證碼：\(code)\n有效期限至 \(expiresAt)（UTC）。只可唸給正在就此案件與您通話的客服；除此之外我們絕不會向您索取。"
        }
    }

    /// The mail of a one-time caller code: what happened, the code and its limits, whom to contact if no call is going on.
    public static func callerCodeBody(caseNumber: String, code: String, expiresAt: String, language: CustomerLanguage, contact: String) -> String {
        [
            greeting(language), "", news(.callerCode, caseNumber: caseNumber, language: language), "",
            callerCodeLine(code, expiresAt: expiresAt, language: language), notYouLine(contact, language: language), "", "-- ",
            signature(language),
        ].joined(separator: "\n")
    }

    /// Where the case stands, in the customer's words: the status page's heading for `stage`, from the same
    /// catalogue (`CustomerCatalogue`), so the mail and the page never describe the case differently.
    public static func state(_ stage: CustomerText, language: CustomerLanguage) -> String {
        CustomerCatalogue.catalogue(language)[stage] ?? CustomerCatalogue.english[stage] ?? stage.rawValue
    }

    /// "Status: …" line.
    static func stateLine(_ text: String, language: CustomerLanguage) -> String {
        switch language {
        case .english: "Status: \(text)."
        case .simplifiedChinese: "当前状态：\(text)。"
        case .traditionalChinese: "目前狀態：\(text)。"
        }
    }

    /// The access code line (only in the mails that carry it).
    static func accessCodeLine(_ code: String, language: CustomerLanguage) -> String {
        switch language {
        case .english: "Your access code: \(code)\nKeep it private: with the case number it shows your case."
        case .simplifiedChinese: "您的访问码：\(code)\n请妥善保管：凭案件编号和访问码即可查看您的案件。"
        case .traditionalChinese: "您的存取碼：\(code)\n請妥善保管：憑案件編號和存取碼即可查看您的案件。"
        }
    }

    /// The line that introduces the page's own next step and list: they speak of "this page" and "below".
    static func pageSaysLine(_ language: CustomerLanguage) -> String {
        switch language {
        case .english: "Your status page says:"
        case .simplifiedChinese: "您的状态页面显示："
        case .traditionalChinese: "您的狀態頁面顯示："
        }
    }

    /// The status link line.
    static func linkLine(_ url: String, language: CustomerLanguage) -> String {
        switch language {
        case .english: "Follow your case here: \(url)"
        case .simplifiedChinese: "在此查看案件进度：\(url)"
        case .traditionalChinese: "在此查看案件進度：\(url)"
        }
    }

    /// The sign-off.
    static func signature(_ language: CustomerLanguage) -> String {
        switch language {
        case .english: "Reclaim support (this message was sent automatically)"
        case .simplifiedChinese: "Reclaim 客服（本邮件为系统自动发送）"
        case .traditionalChinese: "Reclaim 客服（本郵件為系統自動發送）"
        }
    }

    /// Why a document was not accepted: the status page's sentence for the reason, from the same catalogue.
    static func reasonLine(_ reason: CustomerReason, language: CustomerLanguage) -> String {
        let text = reason.text.text(language, contact: "")
        switch language {
        case .english: return "Why: \(text)"
        case .simplifiedChinese: return "原因：\(text)"
        case .traditionalChinese: return "原因：\(text)"
        }
    }

    /// The whole plain-text body: what happened (`kind`), then what the status page says (`status`: its heading as the
    /// status line; its next step and what it still needs, quoted as the page's; its notices, never pay first), in the
    /// page's own sentences, with `{contact}` filled. The contact-changed mail goes to an address that may not be the
    /// customer's (the typo being corrected): it carries no state and no link, only the masked new address
    /// (`newAddress`), whom to contact, and the page's notices.
    /// A rejected document's mail says why (`customerReason`) right after what happened.
    public static func body(
        _ kind: CustomerMailKind, caseNumber: String, status: CustomerMailStatus, accessCode: String?, statusURL: String,
        language: CustomerLanguage, contact: String, newAddress: String = "", customerReason: CustomerReason? = nil
    ) -> String {
        let notices = status.notices.flatMap { ["", $0.text(language, contact: contact)] }
        if kind == .contactChanged {
            return
                ([
                    greeting(language), "", news(kind, caseNumber: caseNumber, language: language, newAddress: newAddress),
                    notYouLine(contact, language: language),
                ] + notices + ["", "-- ", signature(language)]).joined(separator: "\n")
        }
        var lines = [greeting(language), "", news(kind, caseNumber: caseNumber, language: language)]
        if let customerReason { lines.append(reasonLine(customerReason, language: language)) }
        lines.append(stateLine(Self.state(status.stage, language: language), language: language))
        if let accessCode { lines += ["", accessCodeLine(accessCode, language: language)] }
        lines += ["", linkLine(statusURL, language: language)]
        if let next = status.nextStep {
            lines += ["", pageSaysLine(language), next.text(language, contact: contact)]
            lines += status.missing.map { "• " + $0.text.text(language, contact: contact) }
        }
        lines += notices + ["", "-- ", signature(language)]
        return lines.joined(separator: "\n")
    }
}
