-- offers_daily_final: the figures of offers_daily and offers_daily_sums per completed day x
-- provider x GPU model x price type, merged once and stored as plain values, so that a daily
-- history reads values instead of merging aggregate states (the t-digest above all) on every
-- query. The states in offers_daily stay the source: these rows are computed from them and can
-- be rebuilt at any time (TRUNCATE TABLE offers_daily_final, then gpucost migrate).
--
-- gpucost writes a day's rows, every row group of the day in one insert, once the UTC day is
-- over: a load for the completed days it brought rows to and for the completed days after the
-- newest day here; `gpucost migrate` for every completed day whose rows are missing or no longer
-- count what the rollups hold (rows inserted into offers outside gpucost's loads). A day written
-- again gets a higher version; read a row group's newest version with argMax (the
-- ReplacingMergeTree merges older ones away in the background):
--   SELECT day, provider, argMax(min_price, version), argMax(median_price, version),
--          argMax(observations, version)
--   FROM offers_daily_final WHERE gpu_model = 'H100-SXM-80GB' GROUP BY day, provider ORDER BY day
-- A day with no row here (the current day, or a day not written yet) is read from the states.
--
-- median_price is offers_daily's t-digest median (quantilesTDigestMerge(0.5)); sum_price and
-- summed are offers_daily_sums' exact sum and its count (0 for days before migration 0009);
-- avg_price is the server's avgMerge as a Float64, the mean gpucost history falls back to where
-- summed differs from observations (see 0009). Not partitioned: the table is small (a row per
-- row group and day), and one part is what makes a day's insert all or nothing.
CREATE TABLE IF NOT EXISTS offers_daily_final
(
    day             Date,
    provider        LowCardinality(String),
    gpu_model       LowCardinality(String),
    price_type      LowCardinality(String),
    min_price       Decimal(18, 6),
    max_price       Decimal(18, 6),
    median_price    Float64,
    observations    UInt64,
    distinct_offers UInt64,
    sum_price       Decimal(38, 6),
    summed          UInt64,
    avg_price       Float64,
    version         UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (gpu_model, provider, price_type, day);
