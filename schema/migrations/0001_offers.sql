-- offers: one row per price observation, append-only. See docs/analysts.md for every column.
-- Sorted for the filters analysts and the optimizer use: GPU model, provider, price type, time.
-- Monthly partitions keep old months cheap to move, back up or drop.
CREATE TABLE IF NOT EXISTS offers
(
    observed_at            DateTime('UTC'),
    run_id                 String,
    source_url             String,
    provider               LowCardinality(String),
    offer_id               String,
    tier                   LowCardinality(String),
    region                 LowCardinality(String),
    country                LowCardinality(String),
    gpu_model              LowCardinality(String),
    gpu_name_raw           String,
    gpu_count              UInt16,
    vram_gb                Float64,
    vcpus                  Nullable(Float64),
    ram_gb                 Nullable(Float64),
    disk_gb                Nullable(Float64),
    price_type             LowCardinality(String),
    price_usd_per_hour     Decimal(18, 6),
    price_usd_per_gpu_hour Decimal(18, 6),
    intra_node             LowCardinality(String),
    nvlink_gbps            Nullable(Float64),
    inter_node             LowCardinality(String),
    available_count        Nullable(UInt32),
    stock                  LowCardinality(String),
    reliability            Nullable(Float64),
    dq_flags               Array(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(observed_at)
ORDER BY (gpu_model, provider, price_type, observed_at);
