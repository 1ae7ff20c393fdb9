-- 0019: a case's language may be "not known" (api.md v1.2 "A case can be corrected": an agent who sets the language
-- to null says nobody knows which language the customer reads). NULL is that; the foreign key to `languages` lets it
-- through. Mail then goes in English and the status page follows the reader's browser. New cases still default to 'en'.
ALTER TABLE cases ALTER COLUMN language DROP NOT NULL;
