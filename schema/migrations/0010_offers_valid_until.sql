-- valid_until: when an offer's price stops holding, where the source says so (a published price
-- table imported with a valid_until column); NULL for scraped prices, which hold until they are
-- observed again, and for every row stored before this migration.
--
-- offers_latest first: offers_latest_mv is SELECT * FROM offers, so once offers has the column
-- the view passes it on, and offers_latest must take it by then (a current server would drop the
-- value, 18.16 fails the insert). On 18.16 an insert into offers between the two statements fails
-- ("Expected column valid_until") after storing its rows in offers only, so offers_latest misses
-- them until they are observed again: run migrate while no scrape loads.
ALTER TABLE offers_latest ADD COLUMN IF NOT EXISTS valid_until Nullable(DateTime('UTC')) AFTER observed_at;
ALTER TABLE offers ADD COLUMN IF NOT EXISTS valid_until Nullable(DateTime('UTC')) AFTER observed_at;

-- latest_offers has the columns offers_latest had when the view was created (its SELECT * is
-- expanded then, on every server): create it again to show valid_until. A view holds no rows.
DROP TABLE IF EXISTS latest_offers;
CREATE VIEW IF NOT EXISTS latest_offers AS
SELECT * FROM offers_latest FINAL;
