-- plans: one row per workload per `gpucost optimize` run, so savings can be followed over time.
-- Money columns are USD (Decimal); NULL means unknown (no current price, or nothing fits).
CREATE TABLE IF NOT EXISTS plans
(
    run_id                      String,
    generated_at                DateTime('UTC'),
    team                        String,
    workload                    String,
    kind                        LowCardinality(String),
    status                      LowCardinality(String),
    reason                      String,
    current_provider            LowCardinality(String),
    current_gpu_model           LowCardinality(String),
    current_gpu_count           UInt16,
    current_price_type          LowCardinality(String),
    current_price_source        LowCardinality(String),
    current_usd_per_hour        Nullable(Decimal(18, 6)),
    current_usd_per_month       Nullable(Decimal(18, 6)),
    recommended_provider        LowCardinality(String),
    recommended_region          String,
    recommended_offer_id        String,
    recommended_gpu_model       LowCardinality(String),
    recommended_gpu_count       UInt16,
    recommended_nodes           UInt16,
    recommended_price_type      LowCardinality(String),
    recommended_precision       LowCardinality(String),
    recommended_usd_per_hour    Nullable(Decimal(18, 6)),
    recommended_hours_per_month Nullable(Decimal(18, 6)),
    recommended_usd_per_month   Nullable(Decimal(18, 6)),
    savings_usd_per_month       Nullable(Decimal(18, 6)),
    savings_percent             Nullable(Decimal(18, 6)),
    alternatives                UInt16,
    rejected_models             UInt16
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(generated_at)
ORDER BY (team, workload, generated_at);
