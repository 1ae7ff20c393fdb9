import Foundation
import Postgres
import ReclaimCore

extension CaseStore {
    /// The columns of `columns` in a result, found by name once per result (in select-list order: one comparison each).
    struct Columns {
        let id, number, accessCodeHash, accessCodeKeyID, kind, state, tier, path: PostgresColumn
        let rescueEmailAdded, securityQuestionsChanged, twoStepEnabled, lostModeEnabled: PostgresColumn
        let openedAt, stateEnteredAt, pathClockStartedAt, pausedSeconds, pausedSince, dueAt: PostgresColumn
        let accountEmail, customerName, customerContactEmail, customerPhone, devices, summary: PostgresColumn
        let assigneeID, assigneeName, assigneeTier, frozen, createdAt, updatedAt, version: PostgresColumn
        let rescueEmail, language, unlocksDone, unreviewedDocuments, createdBy, mergedInto, mergedFromState, risk, erasedAt,
            awaitingReply: PostgresColumn
        let unlocksScheduled, formerRescueEmails: PostgresColumn
        /// Only in a one-case read (`CaseStore.standingColumns`); nil in queue pages.
        let answerProgress, mergedIntoState: PostgresColumn?

        init(_ rows: PostgresRows) throws {
            var c = rows.columns()
            id = try c("id")
            number = try c("case_number")
            accessCodeHash = try c("access_code_hash")
            accessCodeKeyID = try c("access_code_key_id")
            kind = try c("kind")
            state = try c("state")
            tier = try c("tier")
            path = try c("path")
            rescueEmailAdded = try c("rescue_email_added")
            securityQuestionsChanged = try c("security_questions_changed")
            twoStepEnabled = try c("two_step_enabled")
            lostModeEnabled = try c("lost_mode_enabled")
            openedAt = try c("opened_at")
            stateEnteredAt = try c("state_entered_at")
            pathClockStartedAt = try c("path_clock_started_at")
            pausedSeconds = try c("paused_seconds")
            pausedSince = try c("paused_since")
            dueAt = try c("due_at")
            accountEmail = try c("account_email")
            customerName = try c("customer_name")
            customerContactEmail = try c("customer_contact_email")
            customerPhone = try c("customer_phone")
            devices = try c("devices")
            summary = try c("summary")
            assigneeID = try c("assignee_id")
            assigneeName = try c("assignee_name")
            assigneeTier = try c("assignee_tier")
            frozen = try c("frozen")
            createdAt = try c("created_at")
            updatedAt = try c("updated_at")
            version = try c("version")
            rescueEmail = try c("rescue_email")
            language = try c("language")
            unlocksDone = try c("unlocks_done")
            unreviewedDocuments = try c("unreviewed_documents")
            createdBy = try c("created_by")
            mergedInto = try c("merged_into_number")
            mergedFromState = try c("merged_from_state")
            erasedAt = try c("erased_at")
            risk = try c("risk")
            unlocksScheduled = try c("unlocks_scheduled")
            formerRescueEmails = try c("former_rescue_emails")
            awaitingReply = try c("awaiting_reply")
            answerProgress = try? c("answer_progress")
            mergedIntoState = try? c("merged_into_state")
        }

        func decode(_ row: PostgresRow) throws -> CaseRecord {
            let facts = CaseFacts(
                rescueEmailAdded: try row.decode(rescueEmailAdded), securityQuestionsChanged: try row.decode(securityQuestionsChanged),
                twoStepEnabled: try row.decode(twoStepEnabled), lostModeEnabled: try row.decode(lostModeEnabled))
            let clock = SLAClock(
                openedAt: try row.decode(openedAt), stateEnteredAt: try row.decode(stateEnteredAt),
                pathClockStartedAt: try row.decode(pathClockStartedAt), pausedSeconds: try row.decode(pausedSeconds),
                pausedSince: try row.decode(pausedSince))
            let snapshot = CaseSnapshot(
                kind: try enumValue(row, kind), state: try enumValue(row, state), tier: try enumValue(row, tier),
                path: try enumValue(row, path), facts: facts, clock: clock)
            let devicesText: String = try row.decode(devices)
            var deviceList: [CaseDevice] = []
            if case .array(let items)? = try? JSONValue.parse(devicesText) { deviceList = items.map(CaseDevice.init(json:)) }
            let assigneeTierText: String? = try row.decode(assigneeTier)
            var record = CaseRecord(
                id: try row.decode(id), number: try row.decode(number), accessCodeHash: try row.decode(accessCodeHash),
                accessCodeKeyID: try row.decode(accessCodeKeyID), snapshot: snapshot, dueAt: try row.decode(dueAt),
                accountEmail: try row.decode(accountEmail), customerName: try row.decode(customerName),
                customerContactEmail: try row.decode(customerContactEmail), devices: deviceList, summary: try row.decode(summary),
                assigneeID: try row.decode(assigneeID), assigneeName: try row.decode(assigneeName),
                assigneeTier: assigneeTierText.flatMap(Tier.init(rawValue:)), frozen: try row.decode(frozen),
                createdAt: try row.decode(createdAt), updatedAt: try row.decode(updatedAt), version: try row.decode(version),
                rescueEmail: try row.decode(rescueEmail), language: row.isNull(language) ? nil : try enumValue(row, language),
                unlocksDone: try row.decode(unlocksDone, as: String.self).split(separator: ",").compactMap { UnlockKind(rawValue: String($0)) },
                unreviewedDocuments: try row.decode(unreviewedDocuments, as: Int.self), createdBy: try row.decode(createdBy, as: String.self),
                mergedInto: try row.decode(mergedInto, as: String?.self),
                mergedFromState: try row.decode(mergedFromState, as: String?.self).flatMap(CaseState.init(rawValue:)),
                answerProgress: try progress(row),
                mergedIntoState: try mergedIntoState.flatMap { try row.decode($0, as: String?.self) }.flatMap(CaseState.init(rawValue:)),
                risk: try row.decode(risk, as: Bool.self), unlocksScheduled: try scheduled(row), awaitingReply: try row.decode(awaitingReply))
            record.erasedAt = try row.decode(erasedAt, as: Date?.self)
            record.customerPhone = try row.decode(customerPhone, as: String?.self)
            // A validated address has no space.
            record.formerRescueEmails = try row.decode(formerRescueEmails, as: String.self).split(separator: " ").map(String.init)
            return record
        }

        /// "<step> <microseconds>,…": the steps waiting for their time, soonest first.
        private func scheduled(_ row: PostgresRow) throws -> [ScheduledStep] {
            guard let text = try row.decode(unlocksScheduled, as: String?.self) else { return [] }
            return text.split(separator: ",").compactMap { item in
                let parts = item.split(separator: " ")
                guard parts.count == 2, let step = UnlockKind(rawValue: String(parts[0])), let micros = Int64(parts[1]) else { return nil }
                return ScheduledStep(step: step, effectiveAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000))
            }
        }

        private func progress(_ row: PostgresRow) throws -> AnswerProgress {
            guard let answerProgress else { return AnswerProgress(onFile: 0, matched: 0) }
            let counts = try row.decode(answerProgress, as: String.self).split(separator: ",").compactMap { Int($0) }
            guard counts.count == 2 else { throw PostgresError(.decoding, message: "column \"answer_progress\" is not \"<on file>,<matched>\"") }
            return AnswerProgress(onFile: counts[0], matched: counts[1])
        }

        private func enumValue<T: RawRepresentable>(_ row: PostgresRow, _ column: PostgresColumn) throws -> T where T.RawValue == String {
            guard let value = T(rawValue: try row.decode(column, as: String.self)) else {
                throw PostgresError(.decoding, message: "column \"\(column.name)\" holds an unknown \(T.self)")
            }
            return value
        }
    }
}

extension PostgresRows {
    /// Every row of a `SELECT CaseStore.columns` as a `CaseRecord`, read by column name.
    func decodeCases() throws -> [CaseRecord] {
        guard !isEmpty else { return [] }
        let columns = try CaseStore.Columns(self)
        return try map(columns.decode)
    }
}
