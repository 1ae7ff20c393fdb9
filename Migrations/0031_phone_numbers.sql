-- api.md v1.3 "A phone number on file": the customer's phone on a case and an account's phone on file, in E.164 (`+`
-- and 8 to 15 digits, checked by `PhoneNumber.validate` before it is stored; the check here keeps any other writer to
-- the same shape). Optional: cases and accounts stored before have none. A case's phone is one of its search terms
-- (`case_search`, as written: `+` and digits), so `related` finds a case by it; erasure sets it to NULL.
ALTER TABLE cases ADD COLUMN customer_phone text CONSTRAINT cases_customer_phone_e164 CHECK (customer_phone ~ '^\+[0-9]{8,15}$');
ALTER TABLE accounts ADD COLUMN phone text CONSTRAINT accounts_phone_e164 CHECK (phone ~ '^\+[0-9]{8,15}$');
