package simulator

import (
	"crypto/rand"
	"encoding/binary"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Provider kinds, as SPEC.md names them. A recorded Message carries one of these.
const (
	kindVendorASMS   = "vendora_sms"
	kindVendorAMsgr  = "vendora_msgr"
	kindVendorBSMS   = "vendorb_sms"
	kindVendorBMsgr  = "vendorb_msgr"
	kindPush         = "push_gateway"
	kindMailX        = "mailx_email"
	kindMailY        = "maily_email"
	kindMailZ        = "mailz_email"
	kindChatAWebhook = "chata_webhook"
	kindChatABot     = "chata_bot"
	kindChatBWebhook = "chatb_webhook"
	kindChatBBot     = "chatb_bot"
)

// knownKinds validates the kind of a fault or balance request.
var knownKinds = map[string]bool{
	kindVendorASMS: true, kindVendorAMsgr: true, kindVendorBSMS: true, kindVendorBMsgr: true,
	kindPush: true, kindMailX: true, kindMailY: true, kindMailZ: true,
	kindChatAWebhook: true, kindChatABot: true, kindChatBWebhook: true, kindChatBBot: true,
}

// maxMessages bounds memory during long benchmarks; the oldest are dropped.
const maxMessages = 200_000

// maxBody caps a request body (Solapi allows 15 MB per request).
const maxBody = 16 << 20

// Message is one accepted message as the simulated vendor received it, one
// per recipient. ID is the id the vendor answered for it; vendors that answer
// one id per request (Aligo msg_id and mid) share it among the recipients of
// that request, and Slack incoming webhooks, which answer none, get a
// synthetic "sim-…" id. Headers holds the mail headers of e-mail kinds (with
// From added) and vendor metadata for the other kinds; doc.go lists them.
// A Message returned by the simulator must be treated as read-only.
type Message struct {
	ID         string            `json:"id"`
	Kind       string            `json:"kind"`
	To         string            `json:"to"`
	Subject    string            `json:"subject"`
	Text       string            `json:"text"`
	HTML       string            `json:"html"`
	Headers    map[string]string `json:"headers"`
	ReceivedAt time.Time         `json:"receivedAt"`
	// Call numbers the accepted vendor call that carried the message (1,
	// 2, ...); the messages of one batch call share it.
	Call uint64 `json:"call"`
}

// Simulator is an in-memory stand-in for every vendor API of PROVIDERS.md,
// served as one http.Handler. It is safe for concurrent use. Its own methods
// are the control API (Go and /_sim/); each vendor's endpoints are methods of
// a small type per vendor, all sharing one core.
type Simulator struct {
	*core

	aligo    aligoAPI    // vendora_sms, vendora_msgr (aligo.go)
	solapi   solapiAPI   // vendorb_sms, vendorb_msgr (solapi.go)
	fcm      fcmAPI      // push_gateway (fcm.go)
	resend   resendAPI   // mailx_email (resend.go)
	ses      sesAPI      // maily_email (ses.go)
	postmark postmarkAPI // mailz_email (postmark.go)
	slack    slackAPI    // chata_webhook, chata_bot (chat.go)
	discord  discordAPI  // chatb_webhook, chatb_bot (chat.go)
}

// core is the state every simulated vendor shares: recorded messages,
// faults, balances, ids and the clock.
type core struct {
	store    store
	faults   faultQueue
	balances balances
	sigs     sigCache
	// callbacks: bounce/complaint callbacks to the service (callbacks.go).
	callbacks callbackState
	// idem keeps Resend's Idempotency-Key answers (idempotency.go).
	idem idempotency
	// identities: the e-mail vendors' sending identities (identities.go).
	identities identityState
	// reports: delivery reports of the SMS and AlimTalk kinds (reports.go).
	reports reportState

	// secret signs the stateless tokens (AlimTalk token, OAuth access token),
	// so that checking one needs no shared map on the send path.
	secret [32]byte
	// instance makes ids differ between simulators started in one process.
	instance uint64
	seq      atomic.Uint64
	// calls numbers the accepted vendor calls (Message.Call).
	calls atomic.Uint64
	// snowflake is the last Discord id handed out (monotonic).
	snowflake atomic.Uint64

	// now is the clock; tests of time windows replace it.
	now func() time.Time
}

// The vendor APIs: each is a view of the shared core whose methods are that
// vendor's handlers.
type (
	aligoAPI    struct{ *core }
	solapiAPI   struct{ *core }
	fcmAPI      struct{ *core }
	resendAPI   struct{ *core }
	sesAPI      struct{ *core }
	postmarkAPI struct{ *core }
	slackAPI    struct{ *core }
	discordAPI  struct{ *core }
)

// New returns a simulator with default balances, no messages and no faults,
// ready to serve.
func New() *Simulator {
	c := &core{now: time.Now}
	if _, err := rand.Read(c.secret[:]); err != nil {
		panic("simulator: no randomness: " + err.Error())
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	c.instance = binary.BigEndian.Uint64(b[:])
	c.faults.init()
	c.balances.reset()
	c.sigs.init()
	return &Simulator{core: c,
		aligo: aligoAPI{c}, solapi: solapiAPI{c}, fcm: fcmAPI{c},
		resend: resendAPI{c}, ses: sesAPI{c}, postmark: postmarkAPI{c},
		slack: slackAPI{c}, discord: discordAPI{c},
	}
}

// Reset clears messages and faults and restores the default balances.
// Tokens already issued stay valid.
func (s *Simulator) Reset() {
	s.store.reset()
	s.faults.clear("")
	s.balances.reset()
	s.callbacks.reset()
	s.identities.reset()
	s.reports.reset()
}

// Messages returns the recorded messages of kind addressed to to (an empty
// argument matches all), oldest first and newest last. With limit > 0 only the
// newest limit matches are returned, still oldest first. It answers the same
// data as GET /_sim/messages.
func (s *Simulator) Messages(kind, to string, limit int) []Message {
	return s.store.find(kind, to, limit)
}

// ServeHTTP dispatches to the control API under /_sim/ and to the vendor
// endpoints. Vendor paths are exactly those of PROVIDERS.md, so that one
// address serves every vendor.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if strings.HasPrefix(p, "/_sim/") {
		s.serveControl(w, r)
		return
	}
	if h := s.identityRoute(r); h != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r)
		return
	}
	if h := s.route(p); h != nil {
		method := http.MethodPost
		if p == "/cash/v1/balance" || p == "/messages/v4/list" {
			method = http.MethodGet
		}
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "simulator: method not allowed", "method": r.Method, "path": p})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r)
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "simulator: no such endpoint", "method": r.Method, "path": p})
}

// route finds the handler of a vendor path, nil when none matches.
func (s *Simulator) route(p string) http.HandlerFunc {
	switch p {
	case "/send/":
		return s.aligo.aligoSend
	case "/send_mass/":
		return s.aligo.aligoSendMass
	case "/remain/":
		return s.aligo.aligoRemain
	case "/akv10/alimtalk/send/":
		return s.aligo.alimtalkSend
	case "/akv10/heartinfo/":
		return s.aligo.alimtalkHeartinfo
	case "/sms_list/":
		return s.aligo.aligoSMSList
	case "/akv10/history/detail/":
		return s.aligo.alimtalkHistory
	case "/messages/v4/list":
		return s.solapi.solapiList
	case "/messages/v4/send":
		return s.solapi.solapiSend
	case "/messages/v4/send-many":
		return s.solapi.solapiSendMany
	case "/messages/v4/send-many/detail":
		return s.solapi.solapiSendManyDetail
	case "/cash/v1/balance":
		return s.solapi.solapiBalance
	case "/token":
		return s.fcm.fcmToken
	case "/emails":
		return s.resend.resendSend
	case "/emails/batch":
		return s.resend.resendBatch
	case "/v2/email/outbound-emails":
		return s.ses.sesSend
	case "/email":
		return s.postmark.postmarkSend
	case "/email/batch":
		return s.postmark.postmarkBatch
	case "/api/chat.postMessage":
		return s.slack.slackPostMessage
	}
	switch {
	case strings.HasPrefix(p, "/akv10/token/create/"):
		return s.aligo.alimtalkToken
	case strings.HasPrefix(p, "/v1/projects/") && strings.HasSuffix(p, "/messages:send"):
		return s.fcm.fcmSend
	case strings.HasPrefix(p, "/services/"):
		return s.slack.slackWebhook
	case strings.HasPrefix(p, "/api/"):
		if _, _, ok := discordWebhookPath(p); ok {
			return s.discord.discordWebhook
		}
		if _, ok := discordChannelPath(p); ok {
			return s.discord.discordBot
		}
	}
	return nil
}

// store is a ring buffer of the newest maxMessages messages. Appends are O(1)
// under one short lock; only the control API scans it.
type store struct {
	mu   sync.Mutex
	buf  []Message
	head int // next slot to overwrite once buf is full
	max  int // 0: maxMessages (SetMaxMessages)
}

func (st *store) add(ms []Message) {
	st.mu.Lock()
	limit := st.max
	if limit <= 0 {
		limit = maxMessages
	}
	for _, m := range ms {
		if len(st.buf) < limit {
			st.buf = append(st.buf, m)
			continue
		}
		st.buf[st.head] = m
		st.head++
		if st.head >= limit {
			st.head = 0
		}
	}
	st.mu.Unlock()
}

// SetMaxMessages keeps only the newest n recorded messages from now on
// (default 200,000), for a simulator that runs as long as its process:
// the daemon's test mode keeps a few, not gigabytes of mail bodies. Call
// it before the first message is recorded.
func (s *Simulator) SetMaxMessages(n int) {
	s.store.mu.Lock()
	s.store.max = n
	if n > 0 && len(s.store.buf) > n {
		s.store.buf, s.store.head = nil, 0
	}
	s.store.mu.Unlock()
}

func (st *store) reset() {
	st.mu.Lock()
	st.buf = nil
	st.head = 0
	st.mu.Unlock()
}

func (st *store) find(kind, to string, limit int) []Message {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := len(st.buf)
	out := []Message{}
	// Walk newest to oldest so that a limit keeps the newest matches.
	for i := 0; i < n; i++ {
		m := &st.buf[((st.head-1-i)%n+n)%n]
		if (kind == "" || m.Kind == kind) && (to == "" || m.To == to) {
			out = append(out, *m)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (st *store) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.buf)
}

// record stores accepted messages, stamping kind and time.
func (s *core) record(kind string, ms []Message) {
	if len(ms) == 0 {
		return
	}
	now := s.now().UTC()
	call := s.calls.Add(1)
	for i := range ms {
		ms[i].Kind = kind
		ms[i].ReceivedAt = now
		ms[i].Call = call
	}
	s.store.add(ms)
	s.reports.add(kind, ms, now)
	callbackSender{s}.autoCallbacks(kind, ms)
}
