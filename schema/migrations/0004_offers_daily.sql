-- offers_daily: the daily rollup of $/GPU-hour per day x provider x GPU model x price type,
-- kept by a materialized view on every insert into offers. Read it with the -Merge combinators:
--   SELECT day, minMerge(min_price), avgMerge(avg_price), maxMerge(max_price),
--          quantilesTDigestMerge(0.1, 0.25, 0.5, 0.75, 0.9)(price_quantiles)
--   FROM offers_daily WHERE gpu_model = 'H100-SXM-80GB' GROUP BY day ORDER BY day
-- The quantiles are t-digest estimates (exact for small counts); min/avg/max are exact.
CREATE TABLE IF NOT EXISTS offers_daily
(
    day             Date,
    provider        LowCardinality(String),
    gpu_model       LowCardinality(String),
    price_type      LowCardinality(String),
    min_price       AggregateFunction(min, Decimal(18, 6)),
    avg_price       AggregateFunction(avg, Decimal(18, 6)),
    max_price       AggregateFunction(max, Decimal(18, 6)),
    price_quantiles AggregateFunction(quantilesTDigest(0.1, 0.25, 0.5, 0.75, 0.9), Float64),
    observations    AggregateFunction(count),
    distinct_offers AggregateFunction(uniq, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (gpu_model, provider, price_type, day);

CREATE MATERIALIZED VIEW IF NOT EXISTS offers_daily_mv TO offers_daily AS
SELECT
    toDate(observed_at) AS day,
    provider,
    gpu_model,
    price_type,
    minState(price_usd_per_gpu_hour) AS min_price,
    avgState(price_usd_per_gpu_hour) AS avg_price,
    maxState(price_usd_per_gpu_hour) AS max_price,
    quantilesTDigestState(0.1, 0.25, 0.5, 0.75, 0.9)(toFloat64(price_usd_per_gpu_hour)) AS price_quantiles,
    countState() AS observations,
    uniqState(offer_id) AS distinct_offers
FROM offers
GROUP BY day, provider, gpu_model, price_type;
