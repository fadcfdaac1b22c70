package chaosrun

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// sink is a Slack-like incoming webhook with no idempotency: every POST
// it answers 200 is a message, counted by its text. While failing it
// answers 500 and counts nothing but the refusal. Each call it accepts
// waits latency before answering, so calls are in flight at a kill.
type sink struct {
	srv     *httptest.Server
	latency time.Duration
	failing atomic.Bool
	refused atomic.Int64

	mu    sync.Mutex
	count map[string]int
	first map[string]time.Time // first arrival of each text
}

func newSink(latency time.Duration) *sink {
	s := &sink{latency: latency, count: map[string]int{}, first: map[string]time.Time{}}
	s.srv = httptest.NewServer(s)
	return s
}

// url is the incoming-webhook URL of the chata_webhook account.
func (s *sink) url() string { return s.srv.URL + "/services/T0/B0/secret" }

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if s.failing.Load() {
		s.refused.Add(1)
		http.Error(w, "internal_error", http.StatusInternalServerError)
		return
	}
	var msg struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(b, &msg)
	now := time.Now()
	s.mu.Lock()
	if s.count[msg.Text] == 0 {
		s.first[msg.Text] = now
	}
	s.count[msg.Text]++
	s.mu.Unlock()
	time.Sleep(s.latency)
	_, _ = io.WriteString(w, "ok")
}

// arrivals adds this sink's count and first arrival of each text to
// count and first.
func (s *sink) arrivals(count map[string]int, first map[string]time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for text, n := range s.count {
		count[text] += n
		if f, ok := first[text]; !ok || s.first[text].Before(f) {
			first[text] = s.first[text]
		}
	}
}

// since counts the messages that arrived at or after t.
func (s *sink) since(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.first {
		if !f.Before(t) {
			n++
		}
	}
	return n
}
