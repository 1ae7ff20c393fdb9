-- 0013: a case opened without `language` has none of its own (api.md v1.2 "Finding a case"): the reader's
-- Accept-Language decides its status page, and its mail goes in English until someone sets one. NULL is "not
-- known"; the CHECK of 0006 still holds every value that is set. Existing rows keep what they hold: 'en' was
-- either chosen or the default the agent saw and the customer has been mailed and shown since.
ALTER TABLE cases
    ALTER COLUMN language DROP NOT NULL,
    ALTER COLUMN language DROP DEFAULT;
