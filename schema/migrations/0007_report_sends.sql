-- report_sends: the log of report emails, one row per attempt to send one team its week's
-- report. `gpucost report --email` (and the weekly job of `gpucost serve`) skips a team whose
-- week already has a row with status 'sent', unless --force; failed attempts are kept too.
--   SELECT week_id, team, status, sent_at, attempts, error FROM report_sends ORDER BY sent_at
CREATE TABLE IF NOT EXISTS report_sends
(
    week       Date,
    week_id    String,
    team       String,
    recipients String,
    status     LowCardinality(String),
    sent_at    DateTime('UTC'),
    message_id String,
    attempts   UInt32,
    error      String,
    forced     UInt8
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(week)
ORDER BY (week, team, sent_at);
