package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/mail"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/client"
)

// The campaignserve scenario is the campaign of PERFORMANCE.md as a user
// runs it: the real `notifyd serve` binary (default role), subscribers
// imported and the campaign created and sent through the Dashboard API,
// the mails going to a Resend-compatible fake in this process (the
// mailx_email kind with its call cap lifted and its default batches of
// 100). The time runs from the send call to the last mail at the fake,
// against listmonk's 19.7 s; beside it the server's peak RSS and CPU.

// campaignServeWait bounds the wait for the last mail.
const campaignServeWait = 15 * time.Minute

// resendFake is a Resend-compatible endpoint (POST /emails and POST
// /emails/batch) that counts every recipient address it receives.
type resendFake struct {
	mu     sync.Mutex
	seen   map[string]int
	mails  atomic.Int64 // recipients received, duplicates included
	dups   atomic.Int64
	calls  atomic.Int64
	single atomic.Int64 // calls of POST /emails
	bad    atomic.Int64 // refused requests
	first  atomic.Int64 // unix nanos of the first mail
	last   atomic.Int64 // unix nanos of the latest mail
	srv    *http.Server
	url    string
	// onMail, when set before the first mail, is told each address and
	// when it arrived.
	onMail func(addr string, at time.Time)
	// onHTML, when set before the first mail, is told each mail's HTML
	// part (the tracking scenarios).
	onHTML func(to []string, html string)
}

// reset forgets every mail received, for another campaign to the same
// addresses.
func (f *resendFake) reset() {
	f.mu.Lock()
	f.seen = map[string]int{}
	f.mu.Unlock()
	for _, c := range []*atomic.Int64{&f.mails, &f.dups, &f.calls, &f.single, &f.bad, &f.first, &f.last} {
		c.Store(0)
	}
}

type fakeEmail struct {
	From    string          `json:"from"`
	To      json.RawMessage `json:"to"`
	Subject string          `json:"subject"`
	Text    string          `json:"text"`
	HTML    string          `json:"html"`
}

// recipients is the email's to: a string or a list, as bare addresses.
func (e *fakeEmail) recipients() ([]string, error) {
	var list []string
	if err := json.Unmarshal(e.To, &list); err != nil {
		var one string
		if err := json.Unmarshal(e.To, &one); err != nil {
			return nil, fmt.Errorf("to is neither a string nor a list")
		}
		list = []string{one}
	}
	for i, a := range list {
		if addr, err := mail.ParseAddress(a); err == nil {
			list[i] = addr.Address
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("missing to")
	}
	return list, nil
}

func newResendFake() (*resendFake, error) {
	f := &resendFake{seen: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /emails", func(w http.ResponseWriter, r *http.Request) {
		var e fakeEmail
		if !f.decode(w, r, &e) {
			return
		}
		to, err := e.recipients()
		if err != nil {
			f.refuse(w, 422, "validation_error", err.Error())
			return
		}
		f.single.Add(1)
		if f.onHTML != nil {
			f.onHTML(to, e.HTML)
		}
		f.record(to)
		writeResend(w, map[string]string{"id": resendID()})
	})
	mux.HandleFunc("POST /emails/batch", func(w http.ResponseWriter, r *http.Request) {
		var es []fakeEmail
		if !f.decode(w, r, &es) {
			return
		}
		if len(es) == 0 || len(es) > 100 {
			f.refuse(w, 422, "validation_error", "The batch must contain between 1 and 100 emails.")
			return
		}
		tos := make([][]string, len(es))
		for i := range es {
			to, err := es[i].recipients()
			if err != nil {
				f.refuse(w, 422, "validation_error", fmt.Sprintf("emails[%d]: %v", i, err))
				return
			}
			tos[i] = to
		}
		data := make([]map[string]string, len(es))
		for i := range es {
			if f.onHTML != nil {
				f.onHTML(tos[i], es[i].HTML)
			}
			f.record(tos[i])
			data[i] = map[string]string{"id": resendID()}
		}
		out := map[string]any{"data": data}
		if r.Header.Get("x-batch-validation") == "permissive" {
			out["errors"] = []any{}
		}
		writeResend(w, out)
	})
	f.srv = &http.Server{Handler: mux}
	go f.srv.Serve(ln)
	f.url = "http://" + ln.Addr().String()
	return f, nil
}

func (f *resendFake) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	f.calls.Add(1)
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		f.refuse(w, 401, "missing_api_key", "Missing API key in the authorization header.")
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		f.refuse(w, 422, "validation_error", "Invalid JSON body")
		return false
	}
	return true
}

func (f *resendFake) refuse(w http.ResponseWriter, status int, name, msg string) {
	f.bad.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"statusCode": status, "name": name, "message": msg})
}

func (f *resendFake) record(to []string) {
	f.mu.Lock()
	for _, a := range to {
		f.seen[a]++
		if f.seen[a] > 1 {
			f.dups.Add(1)
		}
	}
	f.mu.Unlock()
	if f.onMail != nil {
		at := time.Now()
		for _, a := range to {
			f.onMail(a, at)
		}
	}
	now := time.Now().UnixNano()
	f.first.CompareAndSwap(0, now)
	f.mails.Add(int64(len(to)))
	f.last.Store(now)
}

func (f *resendFake) unique() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// missing lists up to max addresses of want that never arrived.
func (f *resendFake) missing(want []string, max int) (n int, some []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range want {
		if f.seen[a] == 0 {
			n++
			if len(some) < max {
				some = append(some, a)
			}
		}
	}
	return n, some
}

func writeResend(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// resendID is a UUID-shaped id as Resend gives.
func resendID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// campaignDetail is what the scenario reads of GET /v1/newsletter/campaigns/{id}.
type campaignDetail struct {
	Status          string         `json:"status"`
	TotalRecipients int            `json:"totalRecipients"`
	QueuedCount     int            `json:"queuedCount"`
	FailedCount     int            `json:"failedCount"`
	DeliveryStats   map[string]int `json:"deliveryStats"`
	// EstimatedFinishAt is the detail's estimate (issue 31).
	EstimatedFinishAt *string `json:"estimatedFinishAt"`
}

func getCampaign(ctx context.Context, owner *client.Client, id string) (*campaignDetail, error) {
	r, err := owner.Dashboard(ctx, "GET", "/v1/newsletter/campaigns/"+id, nil)
	if err != nil {
		return nil, err
	}
	if r.Status != 200 {
		return nil, fmt.Errorf("campaign detail: %d %s", r.Status, r.Body)
	}
	var out struct {
		Campaign campaignDetail `json:"campaign"`
	}
	if err := r.Decode(&out); err != nil {
		return nil, err
	}
	return &out.Campaign, nil
}

// campaignServe: a campaign mailed end to end by `notifyd serve`.
func (b *bench) campaignServe(ctx context.Context) error {
	n := fanoutSubscribers
	if b.n > 20000 {
		n = b.n
	}
	fmt.Printf("# campaign of %d subscribers mailed end to end by default notifyd serve on %s, GOMAXPROCS %d, %s\n", n, b.db, runtime.GOMAXPROCS(0), time.Now().UTC().Format(time.RFC3339))
	p, fake, err := b.mailServe(ctx)
	if err != nil {
		return err
	}
	pid := p.cmd.Process.Pid
	want, err := importSubscribers(ctx, p.owner, n)
	if err != nil {
		return err
	}
	id, err := createCampaign(ctx, p.owner, map[string]any{
		"name": "bench", "channel": "email", "subject": "Weekly news for {{name}}", "contentText": fanoutText,
		"isAdvertisement": false, "includeUnsubscribe": false})
	if err != nil {
		return err
	}

	// Peak RSS from here on: reset the server's high-water mark.
	rssOK := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	cpu0 := p.cpu()
	start := time.Now()
	r, err := p.owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns/"+id+"/send", nil)
	if err != nil {
		return err
	}
	if r.Status != 200 {
		return fmt.Errorf("send campaign: %d %s", r.Status, r.Body)
	}
	sendAnswered := time.Since(start)
	var sent struct{ AudienceSize int }
	_ = r.Decode(&sent)
	if sent.AudienceSize != n {
		fmt.Printf("warning: audienceSize %d, expected %d\n", sent.AudienceSize, n)
	}

	// Poll the detail every 5 s, as an operator watching the campaign
	// would: it counts the audience and the requests by status, which on
	// 100,000 rows costs the database a few hundred milliseconds, so a
	// tighter poll would slow the run it measures ("queued all" is
	// therefore known to within 5 s).
	var queuedAll atomic.Int64 // nanos since start
	var lastDetail atomic.Pointer[campaignDetail]
	pollDone := make(chan struct{})
	stopPoll := make(chan struct{})
	go func() {
		defer close(pollDone)
		for {
			d, err := getCampaign(ctx, p.owner, id)
			if err == nil {
				lastDetail.Store(d)
				if queuedAll.Load() == 0 && d.TotalRecipients > 0 && d.QueuedCount >= d.TotalRecipients {
					queuedAll.Store(int64(time.Since(start)))
				}
			}
			wait := 5 * time.Second
			select {
			case <-stopPoll:
				return
			case <-time.After(wait):
			}
		}
	}()

	// Wait for every recipient at the fake, or for the campaign to end
	// with some requests failed, or for the deadline.
	deadline := start.Add(campaignServeWait)
	var ended string
	for {
		if fake.unique() >= n {
			break
		}
		if d := lastDetail.Load(); d != nil && (d.Status == "failed" || d.Status == "canceled" ||
			queuedAll.Load() != 0 && d.DeliveryStats["queued"]+d.DeliveryStats["processing"] == 0 && d.DeliveryStats["unknown"] == 0) {
			ended = fmt.Sprintf("campaign %s with no request left queued or processing", d.Status)
			break
		}
		if time.Now().After(deadline) {
			ended = "gave up after " + campaignServeWait.String()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cpu := p.cpu() - cpu0
	peak := procStatusOf(pid, "VmHWM")
	time.Sleep(2 * time.Second) // late duplicates
	close(stopPoll)
	<-pollDone
	final, ferr := getCampaign(ctx, p.owner, id)

	took := time.Since(start)
	if fake.last.Load() != 0 {
		took = time.Unix(0, fake.last.Load()).Sub(start)
	}
	got := fake.unique()
	fmt.Printf("%-44s %9s  (answered in %s)\n", "send call", "", sendAnswered.Round(time.Millisecond))
	if q := time.Duration(queuedAll.Load()); q > 0 {
		fmt.Printf("%-44s %9.1f s  (%.0f/s queued)\n", "fan-out: queued all after", q.Seconds(), float64(n)/q.Seconds())
	} else {
		fmt.Printf("%-44s %9s\n", "fan-out: queued all", "never seen")
	}
	if fake.first.Load() != 0 {
		fmt.Printf("%-44s %9.1f s\n", "first mail at the fake after", time.Unix(0, fake.first.Load()).Sub(start).Seconds())
	}
	fmt.Printf("%-44s %9.1f s  (%d mails in %d calls, %d single; %d refused)\n", "time from send to the last mail", took.Seconds(),
		fake.mails.Load(), fake.calls.Load(), fake.single.Load(), fake.bad.Load())
	fmt.Printf("%-44s %9.0f/s\n", "mails/s", float64(got)/took.Seconds())
	missing, some := fake.missing(want, 5)
	fmt.Printf("%-44s %9d  (duplicates %d, missing %d; target: %d, 0, 0)\n", "recipients reached (unique)", got, fake.dups.Load(), missing, n)
	if ended != "" {
		fmt.Printf("not complete: %s; missing e.g. %s\n", ended, strings.Join(some, ", "))
	}
	if final != nil {
		fmt.Printf("%-44s status %s, totalRecipients %d, queued %d, failed %d, deliveryStats %v\n", "campaign detail at the end",
			final.Status, final.TotalRecipients, final.QueuedCount, final.FailedCount, final.DeliveryStats)
	} else if ferr != nil {
		fmt.Printf("campaign detail at the end: %v\n", ferr)
	}
	if rssOK && peak > 0 {
		fmt.Printf("%-44s %9.1f MB  (target <= 128 MB)\n", "peak RSS of notifyd serve (VmHWM)", float64(peak)/1024)
	} else {
		fmt.Printf("%-44s (not measurable here)\n", "peak RSS of notifyd serve")
	}
	fmt.Printf("%-44s %9.1f s  (%.0f µs per mail)\n", "server CPU from send to last mail", cpu.Seconds(), float64(cpu.Microseconds())/float64(max(got, 1)))
	// listmonk's figure and the SQLite bound are for 100,000 subscribers;
	// another -n compares against them scaled linearly.
	peer, bound, name := listmonkCampaign.Seconds(), 30.0, "listmonk's 19.7 s / ours"
	if n != fanoutSubscribers {
		scale := float64(n) / fanoutSubscribers
		peer, bound = peer*scale, bound*scale
		name = fmt.Sprintf("listmonk's 19.7 s scaled to %d / ours", n)
	}
	target := "target > 1"
	if b.db == "sqlite" {
		target = fmt.Sprintf("SQLite target: under %.0f s, i.e. > %.2f", bound, peer/bound)
	}
	fmt.Printf("%-44s %8.2f  (%.1f s / %.1f s; %s)\n", "ratio "+name, peer/took.Seconds(), peer, took.Seconds(), target)
	if t := p.logTail(); t != "" {
		fmt.Printf("server log (tail):\n%s\n", t)
	}
	return nil
}

// procStatusOf reads a kB field of /proc/<pid>/status.
func procStatusOf(pid int, field string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}

// importSubscribers imports n subscribers user000001@example.com ... through
// the Dashboard API, 5,000 per import, and answers their addresses.
func importSubscribers(ctx context.Context, owner *client.Client, n int) ([]string, error) {
	want := make([]string, n)
	t0 := time.Now()
	for start := 0; start < n; start += 5000 {
		items := make([]map[string]any, 0, 5000)
		for i := start; i < min(n, start+5000); i++ {
			want[i] = fmt.Sprintf("user%06d@example.com", i+1)
			items = append(items, map[string]any{"channel": "email", "address": want[i], "name": fmt.Sprintf("User %d", i+1),
				"attributes": map[string]string{"name": fmt.Sprintf("User %d", i+1), "plan": "pro"}})
		}
		r, err := owner.Dashboard(ctx, "POST", "/v1/newsletter/subscribers/import", map[string]any{
			"subscribers": items, "consentStatus": "subscribed", "consentSource": "bench"})
		if err != nil {
			return nil, err
		}
		if r.Status != 200 {
			return nil, fmt.Errorf("import: %d %s", r.Status, r.Body)
		}
		var res struct{ Total, Created, Updated, Skipped int }
		if err := r.Decode(&res); err != nil {
			return nil, err
		}
		if res.Created != len(items) {
			return nil, fmt.Errorf("import created %d of %d: %s", res.Created, len(items), r.Body)
		}
	}
	fmt.Printf("%-44s %9.0f/s  (%d in %s)\n", "setup: subscribers imported via the API", float64(n)/time.Since(t0).Seconds(), n, time.Since(t0).Round(time.Millisecond))
	return want, nil
}

// createCampaign creates a campaign through the Dashboard API and answers
// its id.
func createCampaign(ctx context.Context, owner *client.Client, body map[string]any) (string, error) {
	r, err := owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns", body)
	if err != nil {
		return "", err
	}
	if r.Status != 201 {
		return "", fmt.Errorf("create campaign: %d %s", r.Status, r.Body)
	}
	var created struct {
		Campaign struct{ ID string } `json:"campaign"`
	}
	if err := r.Decode(&created); err != nil {
		return "", err
	}
	return created.Campaign.ID, nil
}
