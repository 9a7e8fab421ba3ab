-- offers_latest keeps the newest observation of every offer key (provider, price_type, offer_id):
-- a ReplacingMergeTree versioned by observed_at, fed by a materialized view on offers. Until
-- background merges run it may hold older versions too, so read it through latest_offers
-- (FINAL) or with argMax. An offer a provider stopped listing stays here with its last
-- observed_at: filter on observed_at for "the market now".
CREATE TABLE IF NOT EXISTS offers_latest
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
ENGINE = ReplacingMergeTree(observed_at)
ORDER BY (provider, price_type, offer_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS offers_latest_mv TO offers_latest AS
SELECT
    observed_at, run_id, source_url, provider, offer_id, tier, region, country,
    gpu_model, gpu_name_raw, gpu_count, vram_gb, vcpus, ram_gb, disk_gb,
    price_type, price_usd_per_hour, price_usd_per_gpu_hour,
    intra_node, nvlink_gbps, inter_node, available_count, stock, reliability, dq_flags
FROM offers;

-- latest_offers: the newest observation per offer key, one row each.
CREATE VIEW IF NOT EXISTS latest_offers AS
SELECT
    observed_at, run_id, source_url, provider, offer_id, tier, region, country,
    gpu_model, gpu_name_raw, gpu_count, vram_gb, vcpus, ram_gb, disk_gb,
    price_type, price_usd_per_hour, price_usd_per_gpu_hour,
    intra_node, nvlink_gbps, inter_node, available_count, stock, reliability, dq_flags
FROM offers_latest FINAL;
