-- 0017: a rejected document leads somewhere (api.md v1.2, issue 20). A review that rejects a document names why, in a
-- word of a fixed vocabulary the customer reads in their language (the status page, the mail); `reason` stays the
-- agents' own. A lookup table as 0012's, so a new reason is a row, not a CHECK dropped and re-added.
CREATE TABLE customer_reasons (reason text PRIMARY KEY);
INSERT INTO customer_reasons (reason) VALUES ('unreadable'), ('wrong_document'), ('does_not_match'), ('incomplete'), ('other');

-- Nullable: reviews written before this migration, acceptances and typed evidence have none. Only a rejection names one.
ALTER TABLE evidence_reviews
    ADD COLUMN customer_reason text CONSTRAINT evidence_reviews_customer_reason_fkey REFERENCES customer_reasons (reason),
    ADD CONSTRAINT evidence_reviews_customer_reason_rejected CHECK (customer_reason IS NULL OR decision = 'rejected');

-- A vocabulary (as 0015 says of 0012's): a new reason is a row of a migration, never the service's to add.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON customer_reasons FROM reclaim_service;
