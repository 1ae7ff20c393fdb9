-- 0006: the customer's language (status page and every message sent) and the rescue address the thief added,
-- when known (messages are never sent to it). api.md v1.1 "Cases".
ALTER TABLE cases
    ADD COLUMN language text NOT NULL DEFAULT 'en'
        CONSTRAINT cases_language_check CHECK (language IN ('en', 'zh-Hans', 'zh-Hant')),
    ADD COLUMN rescue_email text
        CONSTRAINT cases_rescue_email_check CHECK (rescue_email IS NULL OR length(rescue_email) BETWEEN 3 AND 254);
