-- runs: what each run put into a daily rollup, so that gpucost can check, batch by batch, that
-- offers_daily and offers_daily_sums hold exactly the observations offers holds. The views add,
-- for every observation, the key cityHash64(run_id) with the value cityHash64(offer_id,
-- price_type); merged, a row group's runs map each run to the sum (modulo 2^64) of those
-- values over its observations in the group: a fingerprint of exactly which observations of the
-- run the rollup holds. When ClickHouse stops between writing an insert's part of offers and the
-- views' parts (a crash), the run's fingerprint in the rollup falls short of the one its stored
-- offers give, and the store adds the missing part (store/rollups.go). Read it with
--   SELECT day, sumMapMerge(runs) FROM offers_daily WHERE gpu_model = 'H100-SXM-80GB' GROUP BY day
-- Rows rolled up before this migration have no runs; nothing checks them (docs/operations.md).
--
-- The views are created again to add the column: an insert into offers between the DROP and
-- the CREATE of a view reaches offers but not that view. gpucost's own loads repair their
-- batches; run migrate while nothing else inserts into offers.
ALTER TABLE offers_daily ADD COLUMN IF NOT EXISTS runs AggregateFunction(sumMap, Array(UInt64), Array(UInt64));
ALTER TABLE offers_daily_sums ADD COLUMN IF NOT EXISTS runs AggregateFunction(sumMap, Array(UInt64), Array(UInt64));

DROP TABLE IF EXISTS offers_daily_mv;
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
    uniqState(offer_id) AS distinct_offers,
    sumMapState([cityHash64(run_id)], [cityHash64(offer_id, price_type)]) AS runs
FROM offers
GROUP BY day, provider, gpu_model, price_type;

DROP TABLE IF EXISTS offers_daily_sums_mv;
CREATE MATERIALIZED VIEW IF NOT EXISTS offers_daily_sums_mv TO offers_daily_sums AS
SELECT
    toDate(observed_at) AS day,
    provider,
    gpu_model,
    price_type,
    sumState(price_usd_per_gpu_hour) AS sum_price,
    countState() AS observations,
    sumMapState([cityHash64(run_id)], [cityHash64(offer_id, price_type)]) AS runs
FROM offers
GROUP BY day, provider, gpu_model, price_type;
