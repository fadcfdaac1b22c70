package dispatch

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
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
// adapters into several vendor calls anyway. A larger value is taken as
// the bound.
const (
	MaxRequestsPerSecond = 10000
	MaxBatchWindowMs     = 60000
	MaxBatchSizeLimit    = 1000
)

// BatchConfig is the adapter batching of one provider account (SPEC
// "Adapter batching"): the kind's defaults with the account's overrides.
type BatchConfig struct {
	// CallsPerSecond caps the account's vendor calls (one flush is one
	// call); zero means unlimited.
	CallsPerSecond float64
	// Window is how long the first message of a batch waits for company.
	Window time.Duration
	// MaxSize flushes a batch at once when it holds this many messages;
	// 1 means per-message sending.
	MaxSize int
}

// BatchConfigFor returns the batching of an account of the kind named
// kind, whose defaults are def, with config cfg: the defaults, overridden by the account's dispatch_* keys. SPEC
// says configJson keys are not validated at registration, so a bad value
// is never refused: a value that is not a number of the right kind is
// ignored (the default stays), one beyond its bound is taken as the
// bound, and a batch size on a kind without a batch API is ignored. Each
// such case is reported in notes, for the log.
func BatchConfigFor(kind string, def BatchConfig, cfg map[string]string) (c BatchConfig, notes []string) {
	c = BatchConfig{CallsPerSecond: def.CallsPerSecond, Window: def.Window, MaxSize: max(def.MaxSize, 1)}
	if v, ok := cfg[KeyRequestsPerSecond]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(f), f < 0:
			notes = append(notes, fmt.Sprintf("configJson.%s ignored: not a number from 0 to %d (0 means unlimited)", KeyRequestsPerSecond, MaxRequestsPerSecond))
		case f > MaxRequestsPerSecond:
			notes = append(notes, fmt.Sprintf("configJson.%s above %d, taken as %d", KeyRequestsPerSecond, MaxRequestsPerSecond, MaxRequestsPerSecond))
			c.CallsPerSecond = MaxRequestsPerSecond
		default:
			c.CallsPerSecond = f
		}
	}
	if v, ok := cfg[KeyBatchWindowMs]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(strings.TrimSpace(v), "-"), err == nil && n > MaxBatchWindowMs:
			notes = append(notes, fmt.Sprintf("configJson.%s above %d, taken as %d", KeyBatchWindowMs, MaxBatchWindowMs, MaxBatchWindowMs))
			c.Window = MaxBatchWindowMs * time.Millisecond
		case err != nil, n < 0:
			notes = append(notes, fmt.Sprintf("configJson.%s ignored: not an integer from 0 to %d", KeyBatchWindowMs, MaxBatchWindowMs))
		default:
			c.Window = time.Duration(n) * time.Millisecond
		}
	}
	if v, ok := cfg[KeyMaxBatchSize]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		over := (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(strings.TrimSpace(v), "-")) || (err == nil && n > MaxBatchSizeLimit)
		switch {
		case def.MaxSize <= 1 && (over || (err == nil && n != 1)):
			notes = append(notes, fmt.Sprintf("configJson.%s ignored: %s sends per message and has no batch API", KeyMaxBatchSize, kind))
		case over:
			notes = append(notes, fmt.Sprintf("configJson.%s above %d, taken as %d", KeyMaxBatchSize, MaxBatchSizeLimit, MaxBatchSizeLimit))
			c.MaxSize = MaxBatchSizeLimit
		case err != nil, n < 1:
			notes = append(notes, fmt.Sprintf("configJson.%s ignored: not an integer from 1 to %d", KeyMaxBatchSize, MaxBatchSizeLimit))
		default:
			c.MaxSize = int(n)
		}
	}
	return c, notes
}
