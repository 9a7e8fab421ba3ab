-- scrape_runs: the run log, one row per provider per run.
CREATE TABLE IF NOT EXISTS scrape_runs
(
    run_id          String,
    provider        LowCardinality(String),
    started_at      DateTime('UTC'),
    finished_at     DateTime('UTC'),
    status          LowCardinality(String),
    offers_parsed   UInt32,
    offers_loaded   UInt32,
    offers_rejected UInt32,
    error           String,
    http_attempts   UInt32
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (provider, started_at, run_id);
