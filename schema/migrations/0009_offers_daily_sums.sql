-- offers_daily_sums: the exact sum of $/GPU-hour and the number of observations per day x
-- provider x GPU model x price type, kept by a materialized view on every insert into offers,
-- so that a daily or weekly mean is the same decimal on every ClickHouse version:
--   SELECT day, sumMerge(sum_price) / countMerge(observations)
--   FROM offers_daily_sums WHERE gpu_model = 'H100-SXM-80GB' GROUP BY day ORDER BY day
-- (cut to 6 places; gpucost history rounds the exact quotient half up). offers_daily's
-- avgMerge(avg_price) is not: ClickHouse 18.x returns the mean as a Decimal cut to 6 places,
-- current versions as a Float64.
--
-- The sums start with this migration (days before it are not back-filled): where a day's
-- observations here differ from offers_daily's, the day began before it, and gpucost history
-- falls back to avgMerge(avg_price) for that bucket.
CREATE TABLE IF NOT EXISTS offers_daily_sums
(
    day          Date,
    provider     LowCardinality(String),
    gpu_model    LowCardinality(String),
    price_type   LowCardinality(String),
    sum_price    AggregateFunction(sum, Decimal(18, 6)),
    observations AggregateFunction(count)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (gpu_model, provider, price_type, day);

CREATE MATERIALIZED VIEW IF NOT EXISTS offers_daily_sums_mv TO offers_daily_sums AS
SELECT
    toDate(observed_at) AS day,
    provider,
    gpu_model,
    price_type,
    sumState(price_usd_per_gpu_hour) AS sum_price,
    countState() AS observations
FROM offers
GROUP BY day, provider, gpu_model, price_type;
