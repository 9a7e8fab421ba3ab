package schema

import "time"

// GPUUsage is how busy a placement's GPUs were over a stretch of time, as measured: the share of
// the time a kernel ran on them (the DCGM exporter's DCGM_FI_DEV_GPU_UTIL over 100), averaged
// over the stretch and over the GPUs seen. Package gpuusage reads it from Prometheus; the
// optimizer plans a service with it when the workload states no utilization of its own.
type GPUUsage struct {
	// Share is the average busy share, 0–1 (0.12 is 12% busy).
	Share float64 `json:"share"`
	// GPUs is how many GPUs (one series each) the measurement covers.
	GPUs int `json:"gpus"`
	// From and To bound the stretch measured, UTC.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}
