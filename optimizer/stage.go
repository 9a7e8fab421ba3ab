package optimizer

import (
	"github.com/gpucost/gpucost/schema"
)

// stage is how far a candidate got through the checks, in the order they run. A rejected GPU
// model is explained by its candidate that got furthest.
type stage int

// Stages, in the order the checks run.
const (
	stageNone      stage = iota
	stageGPU             // gpus_allowed/excluded, compute capability, serving engine
	stagePrecision       // the GPU has no hardware path for the precision
	stageMemory
	stageInterconnect
	stageMultiNode
	stagePriceType
	stageThroughput
	stageDeadline
	stageProvider
	stageHost // host tier or reliability
	stageRegion
	stageAvailability
	stageOK
)

// String is the stage's name in Rejection.Stage.
func (s stage) String() string {
	return [...]string{"", "gpu", "precision", "memory", "interconnect", "multi_node", "price_type", "throughput", "deadline", "provider", "host", "region", "availability", "ok"}[s]
}

// rank orders stages for "got furthest": a missing fabric inside the node and between nodes
// are equally far, so the configuration closest to fitting (closenessOf) decides between them.
func (s stage) rank() stage {
	if s == stageMultiNode {
		return stageInterconnect
	}
	return s
}

// stageOf is the stage named s (Rejection.Stage), as a number: 0 for an unknown name.
func stageOf(s string) int {
	for st := stageNone; st <= stageOK; st++ {
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
	furthest rejection
}

// rejection is a check a candidate failed: its stage, the class and variant, and the offer
// for the per-offer checks.
type rejection struct {
	stage        stage
	closeness    float64 // larger wins within a stage; then the lower class index
	class        *class
	variantIdx   int
	offer        *schema.Offer
	offersNeeded int // offers (nodes) needed, for availability
}

// closenessOf ranks rejections within a stage: the configuration with the most memory, the one
// closest to fitting, explains best ("×8: no NVLink" rather than "×1: needs 6 nodes").
func closenessOf(c *class) float64 {
	return float64(c.gpusPerOffer) * c.vram
}

// noteReject keeps r as the model's furthest rejection when it got further than the one
// kept: a later stage (by rank), else a closer configuration, else an earlier class.
func (p *planner) noteReject(ms *modelState, r rejection) {
	cur := &ms.furthest
	a, b := r.stage.rank(), cur.stage.rank()
	if a > b || (a == b && (r.closeness > cur.closeness || (r.closeness == cur.closeness && r.class.order < cur.class.order))) {
		*cur = r
	}
}
