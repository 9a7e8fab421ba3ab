-- offers_daily_final: the figures of offers_daily and offers_daily_sums per completed day x
-- provider x GPU model x price type, merged once and stored as plain values, so that a daily
-- history reads values instead of merging aggregate states (the t-digest above all) on every
-- query. gpucost writes a day's rows once the day is over: after each load, for every day before
-- the current UTC day whose rows are missing or no longer match the rollups, and `gpucost
-- migrate` for every such day already stored. The states in offers_daily stay the source: the
-- rows here are computed from them and can be rebuilt from them at any time (TRUNCATE, then
-- gpucost migrate).
--
-- A day that receives observations after it was written (a spooled batch loaded the next day,
-- an import) gets new rows with a higher version; until then its row here counts fewer
-- observations than the rollups, and gpucost history reads the day from the states instead. Read
-- a row group's newest version with argMax (ReplacingMergeTree merges the older ones away in the
-- background, on each shard of a cluster only) and trust it while its observations and summed
-- equal countMerge(observations) of offers_daily and of offers_daily_sums:
--   SELECT day, provider, argMax(min_price, version), argMax(median_price, version),
--          argMax(observations, version)
--   FROM offers_daily_final WHERE gpu_model = 'H100-SXM-80GB' GROUP BY day, provider ORDER BY day
--
-- median_price is offers_daily's t-digest median (quantilesTDigestMerge(0.5)); sum_price and
-- summed are offers_daily_sums' exact sum and its count (0 for days before migration 0009);
-- avg_price is the server's avgMerge as a Float64, the mean gpucost history falls back to where
-- summed differs from observations (see 0009).
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
PARTITION BY toYYYYMM(day)
ORDER BY (gpu_model, provider, price_type, day);
