package schema

import "time"

// JobState is what gpucost serve knows of one of its scheduled jobs (the scrape, the nightly
// plan, the weekly report): the scheduler keeps it and /healthz reports it. The times are UTC.
type JobState struct {
	Schedule   string     `json:"schedule"` // the cron spec
	Running    bool       `json:"running"`
	LastStart  *time.Time `json:"last_start,omitempty"`
	LastFinish *time.Time `json:"last_finish,omitempty"`
	LastStatus string     `json:"last_status,omitempty"` // the job's own word for its last outcome; "panicked" when it panicked
	LastError  string     `json:"last_error,omitempty"`
	NextRun    *time.Time `json:"next_run,omitempty"`
}
