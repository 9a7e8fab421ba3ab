-- parser_version: the parser (and GPU catalog) that derived each offer row from its payload,
-- e.g. "vastai/2026-12-01 gpus/1a2b3c4d" (scrapers.ParserVersion), so rows of an older parser can
-- be found and re-derived (gpucost reparse); '' for every row stored before this migration.
--
-- offers_latest first, as in 0010: offers_latest_mv is SELECT * FROM offers. Run migrate while no
-- scrape loads.
ALTER TABLE offers_latest ADD COLUMN IF NOT EXISTS parser_version LowCardinality(String) DEFAULT '';
ALTER TABLE offers ADD COLUMN IF NOT EXISTS parser_version LowCardinality(String) DEFAULT '';

-- latest_offers is SELECT * FROM offers_latest FINAL: made again to show the new column.
DROP TABLE IF EXISTS latest_offers;
CREATE VIEW IF NOT EXISTS latest_offers AS
SELECT * FROM offers_latest FINAL;
