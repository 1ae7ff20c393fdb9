-- 0013: a case opened without `language` has none of its own (api.md v1.2 "Finding a case"): the reader's
-- Accept-Language decides its status page, and its mail goes in English until someone sets one. NULL is "not
-- known"; the constraint on the words (0006's CHECK, or 0012's foreign key to `languages`) lets NULL through.
-- Existing rows keep what they hold: 'en' was either chosen or the default the agent saw, and it is the language
-- the customer has been mailed and shown since; nothing tells the two apart, so no row is guessed at.
ALTER TABLE cases
    ALTER COLUMN language DROP NOT NULL,
    ALTER COLUMN language DROP DEFAULT;
