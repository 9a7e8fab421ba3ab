-- price_changes: one row each time an offer's $/GPU-hour differs from its previous observation.
-- An offer is (provider, price_type, offer_id); its observations are ordered by observed_at, and
-- every observation whose price differs from the one before it is a change:
--   changed_at   when the new price was first seen     previous_at  when the old price was last seen
--   old_price, new_price, change_usd   $/GPU-hour (Decimal(18, 6))   change_pct  percent, 2 decimals
-- The view reads the whole offers table: 18.16 has no window functions, so each offer's
-- observations are gathered into a sorted array, which is array-joined side by side with itself
-- shifted by one (the previous observation; the first is paired with itself and so is no change). Filter on provider, price_type,
-- offer_id or gpu_model to let ClickHouse read less; gpucost's own queries (store.Changes) bound
-- the time range before gathering. See docs/analysts.md.
CREATE VIEW IF NOT EXISTS price_changes AS
SELECT
    cur.1 AS changed_at,
    prev.1 AS previous_at,
    provider,
    price_type,
    offer_id,
    cur.3 AS gpu_model,
    cur.4 AS gpu_count,
    cur.5 AS tier,
    cur.6 AS region,
    prev.2 AS old_price,
    cur.2 AS new_price,
    cur.2 - prev.2 AS change_usd,
    round((toFloat64(cur.2) - toFloat64(prev.2)) / toFloat64(prev.2) * 100, 2) AS change_pct,
    cur.7 AS run_id
FROM
(
    SELECT
        provider,
        price_type,
        offer_id,
        arraySort(groupArray((observed_at, price_usd_per_gpu_hour, CAST(gpu_model AS String), gpu_count, CAST(tier AS String), CAST(region AS String), run_id))) AS obs
    FROM offers
    GROUP BY provider, price_type, offer_id
)
-- arraySlice(obs, 1) is obs itself: a bare column name after ARRAY JOIN is taken for a table
-- and qualified with the database when the view is created ON CLUSTER (ClickHouse 18.16).
ARRAY JOIN arraySlice(obs, 1) AS cur, arrayPushFront(arrayPopBack(obs), obs[1]) AS prev
WHERE cur.2 != prev.2;
