package optimizer

import (
	"github.com/gpucost/gpucost/schema"
)

// stage is how far a candidate got through the checks, in the order they run. A rejected GPU
// model is explained by its candidate that got furthest.
type stage int

const (
	stNone      stage = iota
	stGPU             // gpus_allowed/excluded, compute capability, serving engine
	stPrecision       // the GPU has no hardware path for the precision
	stMemory
	stInterconnect
	stMultiNode
	stPriceType
	stThroughput
	stDeadline
	stProvider
	stHost // host tier or reliability
	stRegion
	stAvailability
	stOK
)

func (s stage) String() string {
	return [...]string{"", "gpu", "precision", "memory", "interconnect", "multi_node", "price_type", "throughput", "deadline", "provider", "host", "region", "availability", "ok"}[s]
}

// rank orders stages for "got furthest": a missing fabric inside the node and between nodes
// are equally far, so the configuration closest to fitting (rejTie) decides between them.
func (s stage) rank() stage {
	if s == stMultiNode {
		return stInterconnect
	}
	return s
}

func stageOf(s string) int {
	for st := stNone; st <= stOK; st++ {
		if st.String() == s {
			return int(st)
		}
	}
	return 0
}

// modelState tracks, per market GPU model, whether a workload found it feasible and, if not,
// the furthest rejection.
type modelState struct {
	feasible bool
	rej      rejection
}

type rejection struct {
	st    stage
	tie   float64 // larger wins within a stage; then the lower class index
	c     *class
	vi    int
	off   *schema.Offer
	extra int // k needed, for availability
}

// rejTie ranks rejections within a stage: the configuration with the most memory, the one
// closest to fitting, explains best ("×8: no NVLink" rather than "×1: needs 6 nodes").
func rejTie(c *class) float64 {
	return float64(c.gpus) * c.vram
}

func (p *planner) noteReject(ms *modelState, r rejection) {
	cur := &ms.rej
	a, b := r.st.rank(), cur.st.rank()
	if a > b || (a == b && (r.tie > cur.tie || (r.tie == cur.tie && r.c.idx < cur.c.idx))) {
		*cur = r
	}
}
