/// The customer's sentences, one catalogue per language, each a whole sentence (see `CustomerText`).
///
/// Written as translations, not word for word: the Chinese catalogues use the vendor's own terms (激活锁 / 啟用鎖定,
/// 两步验证 / 兩步驟驗證) and Taiwan usage for Traditional Chinese (帳號, 裝置, 結案), not a character conversion.
public enum CustomerCatalogue {
    /// The catalogue of `language`.
    public static func catalogue(_ language: CustomerLanguage) -> [CustomerText: String] {
        switch language {
        case .english: english
        case .simplifiedChinese: simplifiedChinese
        case .traditionalChinese: traditionalChinese
        }
    }

    /// English.
    public static let english: [CustomerText: String] = [
        .stageReceived: "We have received your case",
        .stageIdentityCheck: "We are checking that the account is yours",
        .stageDocuments: "We need your proof of ownership",
        .stageReview: "We are reviewing your documents",
        .stageRestoringAccess: "Our engineers are restoring your access",
        .stageRestoringLock: "Our engineers are removing the lock from your device",
        .stageResolvedReset: "We have sent you a reset link",
        .stageResolvedAccess: "Your access is restored",
        .stageResolvedLock: "The lock is removed from your device",
        .stageRejected: "We could not confirm that you are the owner",
        .stageDocumentRejected: "We could not accept one of your documents",
        .stageClosed: "Your case is closed",

        .nextWaitTriage: "Nothing to do for now: an agent will look at your case soon, and this page will show what happens.",
        .nextTellAgent:
            "To confirm that the account is yours, we need the details listed below. This page cannot take them: give them only to our support team at {contact}, quoting your case number.",
        .nextWaitIdentity: "Nothing to do for now: we are comparing what you told us with what is on file, and we will ask here if we need more.",
        .nextUpload: "Please upload the documents listed below, using the form on this page.",
        .nextUploadPaused: "Please upload the documents listed below, using the form on this page. Our deadline is paused until they arrive.",
        .nextUploadAgain:
            "We could not accept a document you sent: the reason is shown beside it below. Please upload another, using the form on this page.",
        .nextUploadAgainPaused:
            "We could not accept a document you sent: the reason is shown beside it below. Please upload another, using the form on this page. Our deadline is paused until it arrives.",
        .nextDocumentsComplete: "Nothing to do for now: we have every document we asked for, and an agent will review them soon.",
        .nextWaitReview: "Nothing to do for now: we are reviewing your documents.",
        .nextWaitEngineeringAccess: "Nothing to do for now: our engineers are undoing the changes made to your account.",
        .nextWaitEngineeringLock: "Nothing to do for now: our engineers are removing the activation lock from your device.",
        .nextDoneReset: "We sent a reset link to your verified primary e-mail address. Follow it to choose a new password.",
        .nextDoneAccess: "Sign in to your account and choose a new password.",
        .nextDoneLock: "You can now set up your device as new.",
        .nextRejected: "If you have more proof of ownership, contact us at {contact}, quoting your case number.",
        .nextClosed: "If the problem comes back, contact us at {contact}, quoting your case number.",

        .missingProofOfPurchase: "Proof of purchase: an invoice, a photo of the back of the box, or your carrier contract",
        .missingIMEIPhoto: "A photo of the serial number or IMEI, ideally of the “Hello” setup screen, otherwise of the device itself",
        .missingLockScreenPhoto: "A photo of the screen showing that the device is locked or lost",
        .missingSecurityAnswer: "The answers to your security questions",
        .missingCard: "The payment card registered to your account",
        .missingDevice: "The serial number or IMEI of a device registered to your account",

        .reasonUnreadable: "We could not read it: send a sharp, well-lit photo or scan in which every word and number can be read.",
        .reasonWrongDocument: "It is not the document we asked for: send one of the kind listed under “What we still need”.",
        .reasonDoesNotMatch: "It does not match your device or account: send one that shows the same serial number, IMEI or name.",
        .reasonIncomplete: "Part of it is missing: send the whole document, with every page and all four edges visible.",
        .reasonOther: "It could not be used as proof of ownership: send another document of the kind listed under “What we still need”.",

        .progressReceived: "Received",
        .progressIdentityCheck: "Identity check",
        .progressDocuments: "Your documents",
        .progressReview: "Review",
        .progressRestoringAccess: "Restoring access",
        .progressRestoringLock: "Removing the lock",
        .progressResetSent: "Reset link sent",
        .progressResolved: "Resolved",
        .progressNotConfirmed: "Not confirmed",
        .progressClosed: "Closed",

        .noticeNeverPay:
            "Never pay whoever locked your device or account, and never send them codes or passwords: paying brings nothing back, and we will never ask you for money.",
        .noticeDeviceOnly:
            "Whoever took your account turned on two-step verification, so the account itself cannot be recovered. Your device can be: once your proof of ownership is approved, our engineers remove the activation lock and you can set the device up as new.",
        .noticeSecureAccount:
            "Your access is back: turn on two-step verification now and change the password of the e-mail account linked to it, so that nobody can take it again.",
        .noticeNewAccount: "When you set the device up, create a new account and turn on two-step verification for it straight away.",
        .noticeContact: "To reach our support team, contact {contact} and quote your case number.",

        .problemNotFound: "No case matches this case number and access code.",
        .problemCodeReplaced:
            "This access code was replaced: a new one was mailed on {date} to {address}. Use the new code from that mail.",
        .problemInvalidCaseNumber: "This is not a valid case number: check it for a typo.",
        .problemLocked: "Too many failed attempts. Try again later.",
        .problemCaseNotOpen: "This case is finished, so nothing more can be added to it. Contact us at {contact}, quoting your case number.",
        .problemStopUnknown:
            "This link is not one we sent, so nothing was changed. Do not trust whoever gave it to you; contact our support team at {contact}.",
        .unlockRemoveRescueEmail: "Remove the rescue e-mail address that was added to the account",
        .unlockResetSecurityQuestions: "Reset the account's security questions",
        .unlockRemoveActivationLock: "Remove the activation lock from the device",
        .stopDone:
            "We have stopped every change that was waiting on this case, and the account stays frozen. Contact our support team at {contact} and tell them this was not you. Never pay anyone who contacts you about this.",
        .stopAgain:
            "This link was used already: the changes stay stopped and the account stays frozen. If you have not done so yet, contact our support team at {contact}. Never pay anyone.",
        .stopTooLate:
            "The change had already been made when you used this link. Our team has been alerted and will look at your case again. Contact our support team at {contact} and tell them this was not you. Never pay anyone who contacts you about this.",
        .problemErased: "This case is finished and your personal data on it has been erased. Contact us at {contact}, quoting your case number.",
    ]

    /// Simplified Chinese (中文简体).
    public static let simplifiedChinese: [CustomerText: String] = [
        .stageReceived: "我们已收到您的案件",
        .stageIdentityCheck: "我们正在核实该账户是否属于您",
        .stageDocuments: "请提供您的所有权证明",
        .stageReview: "我们正在审核您的材料",
        .stageRestoringAccess: "我们的工程师正在为您恢复账户访问权限",
        .stageRestoringLock: "我们的工程师正在解除您设备的锁定",
        .stageResolvedReset: "我们已向您发送重置链接",
        .stageResolvedAccess: "您的账户访问已恢复",
        .stageResolvedLock: "您设备的锁定已解除",
        .stageRejected: "我们无法确认您是所有者",
        .stageDocumentRejected: "您提交的一份材料未能通过审核",
        .stageClosed: "您的案件已关闭",

        .nextWaitTriage: "您目前无需做任何事：客服人员会尽快处理您的案件，进展会显示在本页面上。",
        .nextTellAgent: "为确认该账户属于您，我们还需要下方列出的信息。本页面无法提交这些信息：请只提供给我们的客服团队（{contact}），并告知您的案件编号。",
        .nextWaitIdentity: "您目前无需做任何事：我们正在将您提供的信息与存档资料进行核对，如需更多信息，会在本页面告知您。",
        .nextUpload: "请使用本页面的表单上传下方列出的材料。",
        .nextUploadPaused: "请使用本页面的表单上传下方列出的材料。在收到材料之前，我们的处理时限暂停计算。",
        .nextUploadAgain: "您提交的一份材料未能通过审核，原因显示在下方该材料旁边。请使用本页面的表单重新上传一份。",
        .nextUploadAgainPaused: "您提交的一份材料未能通过审核，原因显示在下方该材料旁边。请使用本页面的表单重新上传一份。在收到材料之前，我们的处理时限暂停计算。",
        .nextDocumentsComplete: "您目前无需做任何事：我们要求的材料已全部收到，客服人员会尽快审核。",
        .nextWaitReview: "您目前无需做任何事：我们正在审核您的材料。",
        .nextWaitEngineeringAccess: "您目前无需做任何事：我们的工程师正在撤销他人对您账户所做的更改。",
        .nextWaitEngineeringLock: "您目前无需做任何事：我们的工程师正在解除您设备的激活锁。",
        .nextDoneReset: "我们已向您经过验证的主要电子邮箱发送了重置链接，请通过该链接设置新密码。",
        .nextDoneAccess: "请登录您的账户并设置新密码。",
        .nextDoneLock: "您现在可以将设备作为新设备进行设置。",
        .nextRejected: "如果您有更多所有权证明，请联系 {contact}，并告知您的案件编号。",
        .nextClosed: "如果问题再次出现，请联系 {contact}，并告知您的案件编号。",

        .missingProofOfPurchase: "购买凭证：发票、包装盒背面的照片或您的运营商合约",
        .missingIMEIPhoto: "序列号或 IMEI 的照片，最好拍摄设置助理的“你好”界面，否则请拍摄设备本身",
        .missingLockScreenPhoto: "显示设备已被锁定或处于丢失模式的屏幕照片",
        .missingSecurityAnswer: "您的安全问题答案",
        .missingCard: "您账户中登记的支付卡",
        .missingDevice: "您账户中登记的设备的序列号或 IMEI",

        .reasonUnreadable: "我们无法看清这份材料：请上传清晰、光线充足的照片或扫描件，确保每个文字和数字都清楚可辨。",
        .reasonWrongDocument: "这不是我们要求的材料：请上传“我们还需要”中列出的材料。",
        .reasonDoesNotMatch: "这份材料与您的设备或账户不符：请上传显示相同序列号、IMEI 或姓名的材料。",
        .reasonIncomplete: "这份材料不完整：请上传完整的材料，每一页及四个边缘都要清晰可见。",
        .reasonOther: "这份材料无法作为所有权证明：请另外上传一份“我们还需要”中列出的材料。",

        .progressReceived: "已受理",
        .progressIdentityCheck: "身份核实",
        .progressDocuments: "您的材料",
        .progressReview: "审核",
        .progressRestoringAccess: "恢复访问",
        .progressRestoringLock: "解除锁定",
        .progressResetSent: "已发送重置链接",
        .progressResolved: "已解决",
        .progressNotConfirmed: "未能确认",
        .progressClosed: "已关闭",

        .noticeNeverPay: "切勿向锁定您设备或账户的人付款，也不要把任何验证码或密码发给对方：付款换不回任何东西，我们也绝不会向您索要钱款。",
        .noticeDeviceOnly: "盗用您账户的人开启了两步验证，因此该账户本身无法恢复。但您的设备可以恢复：所有权证明审核通过后，我们的工程师会解除激活锁，您就可以将设备作为新设备进行设置。",
        .noticeSecureAccount: "您已重新获得访问权限：请立即开启两步验证，并修改与该账户关联的电子邮箱的密码，以免再次被他人盗用。",
        .noticeNewAccount: "设置设备时，请创建一个新账户，并立即为其开启两步验证。",
        .noticeContact: "如需联系我们的客服团队，请通过 {contact} 与我们联系，并告知您的案件编号。",

        .problemNotFound: "没有与此案件编号和访问码相符的案件。",
        .problemCodeReplaced: "此访问码已被替换：新的访问码已于 {date} 发送至 {address}。请使用该邮件中的新访问码。",
        .problemInvalidCaseNumber: "这不是有效的案件编号，请检查是否输入有误。",
        .problemLocked: "尝试失败次数过多，请稍后再试。",
        .problemCaseNotOpen: "此案件已结束，无法再添加任何内容。请联系 {contact}，并告知您的案件编号。",
        .problemStopUnknown: "此链接不是我们发出的，因此没有做任何更改。请不要相信给您此链接的人；请联系我们的客服：{contact}。",
        .unlockRemoveRescueEmail: "移除账户中被添加的救援邮箱",
        .unlockResetSecurityQuestions: "重置账户的安全问题",
        .unlockRemoveActivationLock: "解除设备的激活锁",
        .stopDone: "我们已停止此案件中所有待执行的更改，账户仍保持冻结。请联系我们的客服 {contact}，告知这不是您本人的操作。切勿向任何就此联系您的人付款。",
        .stopAgain: "此链接已使用过：更改仍保持停止，账户仍保持冻结。如果您尚未联系，请联系我们的客服 {contact}。切勿向任何人付款。",
        .stopTooLate: "您使用此链接时，更改已经完成。我们已通知团队，他们会重新审查您的案件。请联系我们的客服 {contact}，告知这不是您本人的操作。切勿向任何就此联系您的人付款。",
        .problemErased: "此案件已结束，其中您的个人数据已被删除。请联系 {contact}，并告知您的案件编号。",
    ]

    /// Traditional Chinese (中文繁體), in Taiwan usage.
    public static let traditionalChinese: [CustomerText: String] = [
        .stageReceived: "我們已收到您的案件",
        .stageIdentityCheck: "我們正在確認此帳號是否屬於您",
        .stageDocuments: "請提供您的所有權證明",
        .stageReview: "我們正在審核您的文件",
        .stageRestoringAccess: "我們的工程師正在為您恢復帳號存取權",
        .stageRestoringLock: "我們的工程師正在解除您裝置的鎖定",
        .stageResolvedReset: "我們已寄出重設連結給您",
        .stageResolvedAccess: "您已恢復帳號存取權",
        .stageResolvedLock: "您裝置的鎖定已解除",
        .stageRejected: "我們無法確認您是擁有者",
        .stageDocumentRejected: "您提交的一份文件未通過審核",
        .stageClosed: "您的案件已結案",

        .nextWaitTriage: "您目前不需要做任何事：客服人員會盡快處理您的案件，後續進度會顯示在此頁面。",
        .nextTellAgent: "為了確認此帳號屬於您，我們還需要下方列出的資料。這些資料無法透過此頁面提交：請只提供給我們的客服團隊（{contact}），並告知您的案件編號。",
        .nextWaitIdentity: "您目前不需要做任何事：我們正在將您提供的資料與存檔資料進行比對，如需更多資料，會在此頁面通知您。",
        .nextUpload: "請使用此頁面的表單上傳下方列出的文件。",
        .nextUploadPaused: "請使用此頁面的表單上傳下方列出的文件。在收到文件之前，我們的處理期限會暫停計算。",
        .nextUploadAgain: "您提交的一份文件未通過審核，原因顯示在下方該文件旁。請使用此頁面的表單重新上傳一份。",
        .nextUploadAgainPaused: "您提交的一份文件未通過審核，原因顯示在下方該文件旁。請使用此頁面的表單重新上傳一份。在收到文件之前，我們的處理期限會暫停計算。",
        .nextDocumentsComplete: "您目前不需要做任何事：我們要求的文件已全部收到，客服人員會盡快審核。",
        .nextWaitReview: "您目前不需要做任何事：我們正在審核您的文件。",
        .nextWaitEngineeringAccess: "您目前不需要做任何事：我們的工程師正在復原他人對您帳號所做的變更。",
        .nextWaitEngineeringLock: "您目前不需要做任何事：我們的工程師正在解除您裝置的啟用鎖定。",
        .nextDoneReset: "我們已將重設連結寄到您已驗證的主要電子郵件地址，請透過該連結設定新密碼。",
        .nextDoneAccess: "請登入您的帳號並設定新密碼。",
        .nextDoneLock: "您現在可以將裝置設定為新裝置。",
        .nextRejected: "如果您有更多所有權證明，請聯絡 {contact}，並告知您的案件編號。",
        .nextClosed: "如果問題再次發生，請聯絡 {contact}，並告知您的案件編號。",

        .missingProofOfPurchase: "購買證明：發票、包裝盒背面的照片，或您的電信合約",
        .missingIMEIPhoto: "序號或 IMEI 的照片，最好拍攝設定輔助程式的「哈囉」畫面，否則請拍攝裝置本身",
        .missingLockScreenPhoto: "顯示裝置已被鎖定或處於遺失模式的螢幕照片",
        .missingSecurityAnswer: "您的安全性問題答案",
        .missingCard: "您帳號中登記的付款卡",
        .missingDevice: "您帳號中登記之裝置的序號或 IMEI",

        .reasonUnreadable: "我們無法辨識這份文件：請上傳清晰、光線充足的照片或掃描檔，確保每個文字和數字都清楚可讀。",
        .reasonWrongDocument: "這不是我們要求的文件：請上傳「我們還需要」中列出的文件。",
        .reasonDoesNotMatch: "這份文件與您的裝置或帳號不符：請上傳顯示相同序號、IMEI 或姓名的文件。",
        .reasonIncomplete: "這份文件不完整：請上傳完整的文件，每一頁及四個邊緣都要清楚可見。",
        .reasonOther: "這份文件無法作為所有權證明：請另外上傳一份「我們還需要」中列出的文件。",

        .progressReceived: "已受理",
        .progressIdentityCheck: "身分確認",
        .progressDocuments: "您的文件",
        .progressReview: "審核",
        .progressRestoringAccess: "恢復存取",
        .progressRestoringLock: "解除鎖定",
        .progressResetSent: "已寄出重設連結",
        .progressResolved: "已解決",
        .progressNotConfirmed: "無法確認",
        .progressClosed: "已結案",

        .noticeNeverPay: "切勿付錢給鎖定您裝置或帳號的人，也不要將任何驗證碼或密碼傳給對方：付錢換不回任何東西，我們也絕不會向您要求付款。",
        .noticeDeviceOnly: "盜用您帳號的人開啟了兩步驟驗證，因此帳號本身無法復原。但您的裝置可以：所有權證明通過審核後，我們的工程師會解除啟用鎖定，您就能將裝置設定為新裝置。",
        .noticeSecureAccount: "您已恢復存取權：請立即開啟兩步驟驗證，並變更與此帳號連結之電子郵件信箱的密碼，以免再次遭人盜用。",
        .noticeNewAccount: "設定裝置時，請建立新的帳號，並立即為其開啟兩步驟驗證。",
        .noticeContact: "如需聯絡我們的客服團隊，請透過 {contact} 與我們聯繫，並告知您的案件編號。",

        .problemNotFound: "找不到符合此案件編號與存取碼的案件。",
        .problemCodeReplaced: "此存取碼已被更換：新的存取碼已於 {date} 寄至 {address}。請使用該郵件中的新存取碼。",
        .problemInvalidCaseNumber: "這不是有效的案件編號，請檢查是否輸入錯誤。",
        .problemLocked: "嘗試失敗次數過多，請稍後再試。",
        .problemCaseNotOpen: "此案件已結案，無法再新增任何內容。請聯絡 {contact}，並告知您的案件編號。",
        .problemStopUnknown: "此連結不是我們寄出的，因此沒有做任何變更。請不要相信給您此連結的人；請聯絡我們的客服：{contact}。",
        .unlockRemoveRescueEmail: "移除帳號中被新增的救援電子郵件地址",
        .unlockResetSecurityQuestions: "重設帳號的安全提示問題",
        .unlockRemoveActivationLock: "解除裝置的啟用鎖",
        .stopDone: "我們已停止此案件中所有待執行的變更，帳號仍維持凍結。請聯絡我們的客服 {contact}，告知這不是您本人的操作。切勿付錢給任何就此聯絡您的人。",
        .stopAgain: "此連結已使用過：變更仍維持停止，帳號仍維持凍結。如果您尚未聯絡，請聯絡我們的客服 {contact}。切勿付錢給任何人。",
        .stopTooLate: "您使用此連結時，變更已經完成。我們已通知團隊，他們會重新審查您的案件。請聯絡我們的客服 {contact}，告知這不是您本人的操作。切勿付錢給任何就此聯絡您的人。",
        .problemErased: "此案件已結案，其中您的個人資料已被刪除。請聯絡 {contact}，並告知您的案件編號。",
    ]
}
