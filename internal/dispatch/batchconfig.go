package dispatch

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/provider"
)

// The configJson keys that override a kind's batching (SPEC "Adapter
// batching").
const (
	KeyRequestsPerSecond = "dispatch_max_requests_per_second"
	KeyBatchWindowMs     = "dispatch_batch_window_ms"
	KeyMaxBatchSize      = "dispatch_max_batch_size"
)

// Bounds of the overrides. A window beyond a minute would hold worker
// slots for nothing; batches beyond MaxBatchSizeLimit are split by the
// adapters into several vendor calls anyway.
const (
	MaxRequestsPerSecond = 10000
	MaxBatchWindowMs     = 60000
	MaxBatchSizeLimit    = 1000
)

// BatchConfigFor returns the batching of an account of kind k with config
// cfg: k's defaults, overridden by the account's dispatch_* keys. A key
// with a bad value is an error naming it; ValidateBatchConfig refuses such
// configs at registration, so at send time an error only comes from
// accounts stored before the check existed, and the caller falls back to
// the defaults.
func BatchConfigFor(k provider.Kind, cfg map[string]string) (BatchConfig, error) {
	c := BatchConfig{CallsPerSecond: k.Batch.CallsPerSecond, Window: k.Batch.Window, MaxSize: max(k.Batch.MaxSize, 1)}
	if v, ok := cfg[KeyRequestsPerSecond]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > MaxRequestsPerSecond {
			return c, fmt.Errorf("configJson.%s must be a number from 0 to %d (0 means unlimited)", KeyRequestsPerSecond, MaxRequestsPerSecond)
		}
		c.CallsPerSecond = f
	}
	if v, ok := cfg[KeyBatchWindowMs]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > MaxBatchWindowMs {
			return c, fmt.Errorf("configJson.%s must be an integer from 0 to %d", KeyBatchWindowMs, MaxBatchWindowMs)
		}
		c.Window = time.Duration(n) * time.Millisecond
	}
	if v, ok := cfg[KeyMaxBatchSize]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > MaxBatchSizeLimit {
			return c, fmt.Errorf("configJson.%s must be an integer from 1 to %d", KeyMaxBatchSize, MaxBatchSizeLimit)
		}
		if k.Batch.MaxSize <= 1 && n != 1 {
			return c, fmt.Errorf("configJson.%s must be 1 for %s: it sends per message and has no batch API", KeyMaxBatchSize, k.ID)
		}
		c.MaxSize = n
	}
	return c, nil
}

// ValidateBatchConfig checks the dispatch_* keys of cfg for kind k.
func ValidateBatchConfig(k provider.Kind, cfg map[string]string) error {
	_, err := BatchConfigFor(k, cfg)
	return err
}
