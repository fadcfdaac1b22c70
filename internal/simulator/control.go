package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Operations a fault can target. Send is the default; balance and token
// faults let tests break quota lookups and token minting separately.
const (
	opSend    = "send"
	opBalance = "balance"
	opToken   = "token"
)

// Default balances (PROVIDERS.md gives none; these are the simulator's).
const (
	defaultASMS     = 1000
	defaultALMS     = 500
	defaultAMMS     = 200
	defaultBBalance = 100000
)

// fault is one queued fault entry; Count is what is left of it.
type fault struct {
	Kind       string `json:"kind"`
	Op         string `json:"op"`
	Status     int    `json:"status,omitempty"`
	VendorCode string `json:"vendorCode,omitempty"`
	Message    string `json:"message,omitempty"`
	Count      int    `json:"count"`
	LatencyMs  int    `json:"latencyMs,omitempty"`
}

type faultKey struct{ kind, op string }

// faultQueue holds faults per kind and operation, in the order they were
// posted. pending lets the send path skip the lock when nothing is queued.
type faultQueue struct {
	pending atomic.Int64
	mu      sync.Mutex
	q       map[faultKey][]*fault
}

func (fq *faultQueue) init() { fq.q = map[faultKey][]*fault{} }

func (fq *faultQueue) push(f fault) {
	fq.mu.Lock()
	k := faultKey{f.Kind, f.Op}
	fq.q[k] = append(fq.q[k], &f)
	fq.pending.Add(1)
	fq.mu.Unlock()
}

// take consumes one call of the first fault queued for kind and op.
func (fq *faultQueue) take(kind, op string) *fault {
	if fq.pending.Load() == 0 {
		return nil
	}
	fq.mu.Lock()
	defer fq.mu.Unlock()
	k := faultKey{kind, op}
	q := fq.q[k]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	f.Count--
	if f.Count <= 0 {
		q[0] = nil
		if len(q) == 1 {
			delete(fq.q, k)
		} else {
			fq.q[k] = q[1:]
		}
		fq.pending.Add(-1)
	}
	c := *f
	return &c
}

// clear drops the faults of kind, or all when kind is empty.
func (fq *faultQueue) clear(kind string) {
	fq.mu.Lock()
	for k, q := range fq.q {
		if kind == "" || k.kind == kind {
			fq.pending.Add(-int64(len(q)))
			delete(fq.q, k)
		}
	}
	fq.mu.Unlock()
}

func (fq *faultQueue) list() []fault {
	fq.mu.Lock()
	defer fq.mu.Unlock()
	keys := make([]faultKey, 0, len(fq.q))
	for k := range fq.q {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].kind != keys[j].kind {
			return keys[i].kind < keys[j].kind
		}
		return keys[i].op < keys[j].op
	})
	out := []fault{}
	for _, k := range keys {
		for _, f := range fq.q[k] {
			out = append(out, *f)
		}
	}
	return out
}

// takeFault consumes the next fault of op for the first of kinds that has
// one, sleeps its latency, and returns it when it also asks for an error
// answer. aborted is true when the client went away during the sleep; the
// handler then writes nothing.
func (s *core) takeFault(r *http.Request, op string, kinds ...string) (f *fault, aborted bool) {
	if cf, ok := r.Context().Value(callFaultKey{}).(fault); ok && op == opSend {
		return &cf, false
	}
	for _, k := range kinds {
		if f = s.faults.take(k, op); f != nil {
			break
		}
	}
	if f == nil {
		return nil, false
	}
	if f.LatencyMs > 0 {
		t := time.NewTimer(time.Duration(f.LatencyMs) * time.Millisecond)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return nil, true
		}
	}
	if f.Status == 0 && f.VendorCode == "" {
		return nil, false
	}
	return f, false
}

// callFaultKey carries a fault for one call in its request's context
// (WithFault).
type callFaultKey struct{}

// WithFault returns ctx carrying a fault for the send call made under it,
// for a caller that serves the simulator in process (the daemon's test
// mode): the call answers that HTTP status or vendor error code, in the
// vendor's format, exactly as a queued fault of its kind would, without
// touching the fault queue other callers share.
func WithFault(ctx context.Context, status int, vendorCode string) context.Context {
	return context.WithValue(ctx, callFaultKey{}, fault{Op: opSend, Status: status, VendorCode: vendorCode, Count: 1})
}

// balances are per vendor, not per kind: both kinds of a vendor draw on one
// account, as with the real vendors. Sends never consume them.
type balances struct {
	mu               sync.Mutex
	aSMS, aLMS, aMMS int64
	bBalance, bPoint float64
}

func (b *balances) reset() {
	b.mu.Lock()
	b.aSMS, b.aLMS, b.aMMS = defaultASMS, defaultALMS, defaultAMMS
	b.bBalance, b.bPoint = defaultBBalance, 0
	b.mu.Unlock()
}

func (b *balances) vendorA() (sms, lms, mms int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.aSMS, b.aLMS, b.aMMS
}

func (b *balances) vendorB() (balance, point float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bBalance, b.bPoint
}

func (b *balances) view() map[string]any {
	sms, lms, mms := b.vendorA()
	bal, pt := b.vendorB()
	return map[string]any{
		"vendora": map[string]int64{"SMS_CNT": sms, "LMS_CNT": lms, "MMS_CNT": mms},
		"vendorb": map[string]float64{"balance": bal, "point": pt},
	}
}

// controlError answers a control-API error.
func controlError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (s *Simulator) serveControl(w http.ResponseWriter, r *http.Request) {
	if s.serveCallbackControl(w, r) || s.serveIdentityControl(w, r) || s.serveReportControl(w, r) {
		return
	}
	route := r.Method + " " + strings.TrimSuffix(r.URL.Path, "/")
	switch route {
	case "GET /_sim/messages":
		s.ctlMessages(w, r)
	case "DELETE /_sim/messages":
		s.store.reset()
		w.WriteHeader(http.StatusNoContent)
	case "GET /_sim/faults":
		writeJSON(w, http.StatusOK, map[string]any{"faults": s.faults.list()})
	case "POST /_sim/faults":
		s.ctlAddFault(w, r)
	case "DELETE /_sim/faults":
		s.faults.clear(r.URL.Query().Get("kind"))
		w.WriteHeader(http.StatusNoContent)
	case "GET /_sim/balance":
		writeJSON(w, http.StatusOK, s.balances.view())
	case "PUT /_sim/balance":
		s.ctlSetBalance(w, r)
	case "POST /_sim/reset":
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	default:
		controlError(w, http.StatusNotFound, "simulator: no such control endpoint: "+r.Method+" "+r.URL.Path)
	}
}

func (s *Simulator) ctlMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			controlError(w, http.StatusBadRequest, "limit must be a non-negative integer")
			return
		}
		limit = n
	}
	kind := q.Get("kind")
	if kind != "" && !knownKinds[kind] {
		controlError(w, http.StatusBadRequest, "unknown kind "+strconv.Quote(kind))
		return
	}
	ms := s.Messages(kind, q.Get("to"), limit)
	for i := range ms {
		if ms[i].Headers == nil {
			ms[i].Headers = map[string]string{}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": ms})
}

// faultRequest is the body of POST /_sim/faults. VendorCode takes a JSON
// string or number (-201 and "-201" alike).
type faultRequest struct {
	Kind       string          `json:"kind"`
	Op         string          `json:"op"`
	Status     int             `json:"status"`
	VendorCode json.RawMessage `json:"vendorCode"`
	Message    string          `json:"message"`
	Count      *int            `json:"count"`
	LatencyMs  int             `json:"latencyMs"`
}

func (s *Simulator) ctlAddFault(w http.ResponseWriter, r *http.Request) {
	var req faultRequest
	if err := decodeStrict(r, &req); err != nil {
		controlError(w, http.StatusBadRequest, "invalid body: "+err.Error())
		return
	}
	f, msg := req.validate()
	if msg != "" {
		controlError(w, http.StatusBadRequest, msg)
		return
	}
	s.faults.push(f)
	writeJSON(w, http.StatusCreated, map[string]any{"fault": f})
}

func (req faultRequest) validate() (fault, string) {
	f := fault{Kind: req.Kind, Op: req.Op, Status: req.Status, Message: req.Message, LatencyMs: req.LatencyMs, Count: 1}
	if !knownKinds[f.Kind] {
		return f, "unknown kind " + strconv.Quote(f.Kind)
	}
	if f.Op == "" {
		f.Op = opSend
	}
	switch f.Op {
	case opSend:
	case opBalance:
		if !strings.HasPrefix(f.Kind, "vendora_") && !strings.HasPrefix(f.Kind, "vendorb_") {
			return f, "op balance applies to vendora_* and vendorb_* kinds only"
		}
	case opToken:
		if f.Kind != kindVendorAMsgr && f.Kind != kindPush {
			return f, "op token applies to vendora_msgr and push_gateway only"
		}
	default:
		return f, "op must be send, balance or token"
	}
	if req.Count != nil {
		if *req.Count < 1 || *req.Count > 1_000_000 {
			return f, "count must be between 1 and 1000000"
		}
		f.Count = *req.Count
	}
	if f.Status != 0 && (f.Status < 200 || f.Status > 599) {
		return f, "status must be an HTTP status between 200 and 599"
	}
	if f.LatencyMs < 0 || f.LatencyMs > 600_000 {
		return f, "latencyMs must be between 0 and 600000"
	}
	code, err := rawCode(req.VendorCode)
	if err != "" {
		return f, err
	}
	f.VendorCode = code
	if code != "" && numericCodeKinds[f.Kind] {
		if _, err := strconv.Atoi(code); err != nil {
			return f, "vendorCode of " + f.Kind + " must be an integer"
		}
	}
	if f.Status == 0 && f.VendorCode == "" && f.LatencyMs == 0 {
		return f, "a fault needs status, vendorCode or latencyMs"
	}
	return f, ""
}

// numericCodeKinds are the vendors whose error codes are numbers.
var numericCodeKinds = map[string]bool{
	kindVendorASMS: true, kindVendorAMsgr: true, kindMailZ: true, kindChatBWebhook: true, kindChatBBot: true,
}

func rawCode(raw json.RawMessage) (string, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s), ""
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), ""
	}
	return "", "vendorCode must be a string or a number"
}

// balanceRequest is the body of PUT /_sim/balance.
type balanceRequest struct {
	Kind  string   `json:"kind"`
	Value *float64 `json:"value"`
	LMS   *float64 `json:"lms"`
	MMS   *float64 `json:"mms"`
	Point *float64 `json:"point"`
}

func (s *Simulator) ctlSetBalance(w http.ResponseWriter, r *http.Request) {
	var req balanceRequest
	if err := decodeStrict(r, &req); err != nil {
		controlError(w, http.StatusBadRequest, "invalid body: "+err.Error())
		return
	}
	if req.Value == nil {
		controlError(w, http.StatusBadRequest, "value is required")
		return
	}
	count := func(p *float64) (int64, bool) {
		if p == nil {
			return 0, true
		}
		if *p < 0 || *p != math.Trunc(*p) || *p > 1e15 {
			return 0, false
		}
		return int64(*p), true
	}
	b := &s.balances
	switch req.Kind {
	case kindVendorASMS, kindVendorAMsgr:
		sms, ok1 := count(req.Value)
		lms, ok2 := count(req.LMS)
		mms, ok3 := count(req.MMS)
		if !ok1 || !ok2 || !ok3 {
			controlError(w, http.StatusBadRequest, "vendorA counts must be non-negative integers")
			return
		}
		b.mu.Lock()
		b.aSMS, b.aLMS, b.aMMS = sms, lms, mms
		b.mu.Unlock()
	case kindVendorBSMS, kindVendorBMsgr:
		if *req.Value < 0 || (req.Point != nil && *req.Point < 0) {
			controlError(w, http.StatusBadRequest, "vendorB balance must not be negative")
			return
		}
		b.mu.Lock()
		b.bBalance = *req.Value
		if req.Point != nil {
			b.bPoint = *req.Point
		}
		b.mu.Unlock()
	default:
		controlError(w, http.StatusBadRequest, "kind "+strconv.Quote(req.Kind)+" has no balance (vendora_* and vendorb_* only)")
		return
	}
	writeJSON(w, http.StatusOK, b.view())
}

// decodeStrict decodes a control-API body, refusing unknown fields so that a
// typo in a test does not silently queue the wrong fault.
func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
