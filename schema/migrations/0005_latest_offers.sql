-- offers_latest keeps the newest observation of every offer key (provider, price_type, offer_id):
-- a ReplacingMergeTree versioned by observed_at with the columns of offers, fed by a
-- materialized view on offers. Until background merges run it may hold older versions too, so
-- read it through latest_offers (FINAL) or with argMax. An offer a provider stopped listing
-- stays here with its last observed_at: filter on observed_at for "the market now".
CREATE TABLE IF NOT EXISTS offers_latest AS offers
ENGINE = ReplacingMergeTree(observed_at)
ORDER BY (provider, price_type, offer_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS offers_latest_mv TO offers_latest AS
SELECT * FROM offers;

-- latest_offers: the newest observation per offer key, one row each, with the columns of offers.
CREATE VIEW IF NOT EXISTS latest_offers AS
SELECT * FROM offers_latest FINAL;
