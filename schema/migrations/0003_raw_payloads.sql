-- raw_payloads: every response body a run fetched, so a parser fix can re-derive history.
CREATE TABLE IF NOT EXISTS raw_payloads
(
    run_id     String,
    provider   LowCardinality(String),
    url        String,
    status     UInt16,
    fetched_at DateTime('UTC'),
    body       String
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(fetched_at)
ORDER BY (provider, fetched_at, run_id);
