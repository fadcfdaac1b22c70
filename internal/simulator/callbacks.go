package simulator

import (
	"bytes"
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Vendor callbacks: the simulator posts bounce and complaint notifications
// to the service as each vendor would (see doc.go, "Callbacks").

// snsAccount and snsRegion make the simulated topic ARN.
const (
	snsAccount = "123456789012"
	snsRegion  = "us-east-1"
	snsTopic   = "ses-feedback"
)

// SES mailbox-simulator addresses: a message sent to one of these through
// any e-mail kind triggers the automatic callback registered for the kind.
const (
	SESBounceAddress    = "bounce@simulator.amazonses.com"
	SESComplaintAddress = "complaint@simulator.amazonses.com"
	// SESSuccessAddress is reported delivered (issue 35) before the send
	// is answered: a callback that outruns the vendor's own answer, so
	// the service learns of the delivery before it recorded the send.
	SESSuccessAddress = "success@simulator.amazonses.com"
)

// callbackState holds the SNS signing key and certificate (made on first
// use: RSA key generation is slow), confirmed subscriptions and the
// automatic-callback targets per kind.
type callbackState struct {
	once    sync.Once
	key     *rsa.PrivateKey
	certPEM []byte
	keyErr  error

	mu            sync.Mutex
	subscriptions []Subscription
	auto          map[string]AutoCallback
	autoBase      string
	client        *http.Client
}

// Subscription is an SNS subscription the service confirmed by visiting
// its SubscribeURL.
type Subscription struct {
	TopicArn    string    `json:"topicArn"`
	Token       string    `json:"token"`
	ConfirmedAt time.Time `json:"confirmedAt"`
}

// AutoCallback is where the simulator posts automatically when a message
// of Kind goes to a mailbox-simulator address.
type AutoCallback struct {
	Kind             string `json:"kind"`
	URL              string `json:"url"`
	Secret           string `json:"secret,omitempty"`
	SignatureVersion string `json:"signatureVersion,omitempty"`
}

// CallbackRequest is the body of POST /_sim/callbacks.
type CallbackRequest struct {
	Kind string `json:"kind"` // maily_email, mailx_email or mailz_email
	URL  string `json:"url"`  // where the service receives callbacks
	// Secret: the Resend webhook's whsec_ signing secret (required for
	// mailx_email); for mailz_email, sent as the basic-auth password.
	Secret string `json:"secret,omitempty"`
	// Type: bounce, complaint, or subscription (maily_email: an SNS
	// SubscriptionConfirmation).
	Type string `json:"type"`
	// BounceType: permanent (default) or transient.
	BounceType string `json:"bounceType,omitempty"`
	To         string `json:"to,omitempty"`
	// MessageID defaults to the id of the newest recorded message of the
	// kind to To.
	MessageID string `json:"messageId,omitempty"`
	// SignatureVersion: SNS "1" (default, SHA1withRSA) or "2" (SHA256withRSA).
	SignatureVersion string `json:"signatureVersion,omitempty"`
	// CertBase overrides the scheme://host the SNS SigningCertURL and
	// SubscribeURL point at (default: the simulator's own address).
	CertBase string `json:"certBase,omitempty"`
}

// CallbackResult is what the service answered.
type CallbackResult struct {
	Status    int    `json:"status"`
	Body      string `json:"body"`
	MessageID string `json:"messageId"`
	Payload   string `json:"payload"` // the body that was posted
	// Headers are the headers posted with it, so that a test can replay the
	// delivery exactly as a vendor retry would.
	Headers map[string]string `json:"headers"`
}

func (cs *callbackState) signer() (*rsa.PrivateKey, []byte, error) {
	cs.once.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			cs.keyErr = err
			return
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(time.Now().UnixNano()),
			Subject:      pkix.Name{CommonName: "sns.amazonaws.com"},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			cs.keyErr = err
			return
		}
		cs.key, cs.certPEM = key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	})
	return cs.key, cs.certPEM, cs.keyErr
}

// SNSCertificatePath is where the simulator serves its SNS signing
// certificate.
const SNSCertificatePath = "/_sim/sns/SimpleNotificationService-simulator.pem"

// serveCallbackControl handles the callback control endpoints; false when
// the request is not one of them.
func (s *Simulator) serveCallbackControl(w http.ResponseWriter, r *http.Request) bool {
	switch r.Method + " " + strings.TrimSuffix(r.URL.Path, "/") {
	case "POST /_sim/callbacks":
		var req CallbackRequest
		if err := decodeStrict(r, &req); err != nil {
			controlError(w, http.StatusBadRequest, "invalid body: "+err.Error())
			return true
		}
		if req.CertBase == "" {
			req.CertBase = "http://" + r.Host
		}
		res, status, err := callbackSender{s.core}.postCallback(r.Context(), req)
		if err != nil {
			controlError(w, status, err.Error())
			return true
		}
		writeJSON(w, http.StatusOK, res)
	case "PUT /_sim/callbacks/auto":
		var req AutoCallback
		if err := decodeStrict(r, &req); err != nil {
			controlError(w, http.StatusBadRequest, "invalid body: "+err.Error())
			return true
		}
		if !callbackKinds[req.Kind] || req.URL == "" {
			controlError(w, http.StatusBadRequest, "kind must be maily_email, mailx_email or mailz_email, and url is required")
			return true
		}
		s.SetAutoCallback(req, "http://"+r.Host)
		writeJSON(w, http.StatusOK, req)
	case "DELETE /_sim/callbacks/auto":
		s.callbacks.mu.Lock()
		s.callbacks.auto = nil
		s.callbacks.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "GET " + SNSCertificatePath:
		_, certPEM, err := s.callbacks.signer()
		if err != nil {
			controlError(w, http.StatusInternalServerError, err.Error())
			return true
		}
		writeText(w, http.StatusOK, "application/x-pem-file", string(certPEM))
	case "GET /_sim/sns/confirm":
		s.snsConfirm(w, r)
	case "GET /_sim/sns/subscriptions":
		writeJSON(w, http.StatusOK, map[string]any{"subscriptions": s.Subscriptions()})
	default:
		return false
	}
	return true
}

var callbackKinds = map[string]bool{kindMailX: true, kindMailY: true, kindMailZ: true}

// reset forgets subscriptions and automatic callbacks; the signing key
// stays, as certificates already fetched must keep verifying.
func (cs *callbackState) reset() {
	cs.mu.Lock()
	cs.subscriptions, cs.auto = nil, nil
	cs.mu.Unlock()
}

// Subscriptions lists the SNS subscriptions confirmed so far.
func (s *Simulator) Subscriptions() []Subscription {
	s.callbacks.mu.Lock()
	defer s.callbacks.mu.Unlock()
	return append([]Subscription{}, s.callbacks.subscriptions...)
}

// snsConfirm is the SubscribeURL: ?Action=ConfirmSubscription&TopicArn=&Token=.
func (s *Simulator) snsConfirm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("Action") != "ConfirmSubscription" || q.Get("TopicArn") == "" || q.Get("Token") == "" {
		writeText(w, http.StatusBadRequest, "text/xml", "<ErrorResponse><Error><Code>InvalidParameter</Code></Error></ErrorResponse>")
		return
	}
	sub := Subscription{TopicArn: q.Get("TopicArn"), Token: q.Get("Token"), ConfirmedAt: s.now().UTC()}
	s.callbacks.mu.Lock()
	s.callbacks.subscriptions = append(s.callbacks.subscriptions, sub)
	s.callbacks.mu.Unlock()
	arn := sub.TopicArn + ":" + s.uuid()
	writeText(w, http.StatusOK, "text/xml", "<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>"+
		arn+"</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>")
}

// SetAutoCallback registers where messages of cb.Kind sent to a
// mailbox-simulator address are reported; base is the simulator's own
// scheme://host for SNS certificate URLs.
func (s *Simulator) SetAutoCallback(cb AutoCallback, base string) {
	s.callbacks.mu.Lock()
	if s.callbacks.auto == nil {
		s.callbacks.auto = map[string]AutoCallback{}
	}
	cb.URL = strings.TrimSpace(cb.URL)
	s.callbacks.auto[cb.Kind] = cb
	s.callbacks.autoBase = base
	s.callbacks.mu.Unlock()
}

// callbackSender posts vendor callbacks to the service. Like the vendor
// APIs it is a view of the core: recording a message may fire one.
type callbackSender struct{ *core }

// autoCallbacks fires the registered callback for recorded messages to the
// mailbox-simulator addresses, shortly after the send answered (as the
// vendors report asynchronously).
func (s callbackSender) autoCallbacks(kind string, ms []Message) {
	if !callbackKinds[kind] {
		return
	}
	s.callbacks.mu.Lock()
	cb, ok := s.callbacks.auto[kind]
	base := s.callbacks.autoBase
	s.callbacks.mu.Unlock()
	if !ok {
		return
	}
	for _, m := range ms {
		var typ string
		switch strings.ToLower(m.To) {
		case SESBounceAddress:
			typ = "bounce"
		case SESComplaintAddress:
			typ = "complaint"
		case SESSuccessAddress:
			typ = "delivery"
		default:
			continue
		}
		req := CallbackRequest{Kind: kind, URL: cb.URL, Secret: cb.Secret, Type: typ, To: m.To, MessageID: m.ID,
			SignatureVersion: cb.SignatureVersion, CertBase: base}
		if typ == "delivery" {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			_, _, _ = s.postCallback(ctx, req)
			cancel()
			continue
		}
		go func() {
			time.Sleep(300 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_, _, _ = s.postCallback(ctx, req)
		}()
	}
}

// PostCallback posts one vendor callback as POST /_sim/callbacks does.
func (s *Simulator) PostCallback(ctx context.Context, req CallbackRequest) (*CallbackResult, error) {
	res, _, err := callbackSender{s.core}.postCallback(ctx, req)
	return res, err
}

// CallbackBody builds the callback PostCallback would post (the vendor's
// body and headers, signature included) without posting it, for a caller
// that posts many over its own connections (the receipts benchmark).
func (s *Simulator) CallbackBody(req CallbackRequest) ([]byte, http.Header, error) {
	cs := callbackSender{s.core}
	if err := checkCallback(&req); err != nil {
		return nil, nil, err
	}
	if err := cs.findMessageID(&req); err != nil {
		return nil, nil, err
	}
	header := http.Header{"Content-Type": {"application/json"}}
	body, err := cs.callbackBody(req, s.now().UTC(), header)
	return body, header, err
}

// postCallback checks req, builds the vendor's body and posts it; the int
// is the control API's status when it fails.
func (s callbackSender) postCallback(ctx context.Context, req CallbackRequest) (*CallbackResult, int, error) {
	if err := checkCallback(&req); err != nil {
		return nil, http.StatusBadRequest, err
	}
	if err := s.findMessageID(&req); err != nil {
		return nil, http.StatusBadRequest, err
	}
	header := http.Header{"Content-Type": {"application/json"}}
	body, err := s.callbackBody(req, s.now().UTC(), header)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	return s.send(ctx, req, body, header)
}

// checkCallback validates a callback request and fills in its defaults.
func checkCallback(req *CallbackRequest) error {
	if !callbackKinds[req.Kind] {
		return errors.New("kind must be maily_email, mailx_email or mailz_email")
	}
	if u, err := url.Parse(req.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("url must be an absolute http(s) URL")
	}
	switch req.Type {
	case "bounce", "complaint", "delivery":
	case "subscription":
		if req.Kind != kindMailY {
			return errors.New("type subscription applies to maily_email (SNS) only")
		}
	default:
		return errors.New("type must be bounce, complaint, delivery or subscription")
	}
	switch req.BounceType {
	case "":
		req.BounceType = "permanent"
	case "permanent", "transient":
	default:
		return errors.New("bounceType must be permanent or transient")
	}
	if req.SignatureVersion == "" {
		req.SignatureVersion = "1"
	}
	if req.SignatureVersion != "1" && req.SignatureVersion != "2" {
		return errors.New("signatureVersion must be 1 or 2")
	}
	return nil
}

// findMessageID requires a recipient for bounces and complaints and, when
// no message id is given, takes the newest recorded message's to it.
func (s callbackSender) findMessageID(req *CallbackRequest) error {
	if req.Type == "subscription" {
		return nil
	}
	if req.To == "" {
		return errors.New("to is required")
	}
	if req.MessageID == "" {
		ms := s.store.find(req.Kind, req.To, 1)
		if len(ms) == 0 {
			return errors.New("no recorded " + req.Kind + " message to " + req.To + "; give messageId")
		}
		req.MessageID = ms[0].ID
	}
	return nil
}

// callbackBody is the body the kind's vendor posts, its headers (signature
// included) set on header.
func (s callbackSender) callbackBody(req CallbackRequest, now time.Time, header http.Header) ([]byte, error) {
	switch req.Kind {
	case kindMailY:
		header.Set("Content-Type", "text/plain; charset=UTF-8") // as SNS sends it
		return s.snsBody(req, now, header)
	case kindMailX:
		if !strings.HasPrefix(req.Secret, "whsec_") {
			return nil, errors.New("mailx_email needs the webhook's whsec_ secret")
		}
		body := resendBody(req, now)
		return body, svixSign(req.Secret, "msg_"+strings.ReplaceAll(s.uuid(), "-", ""), now, body, header)
	default: // kindMailZ
		body := postmarkBody(req, s.next(), now)
		if req.Secret != "" {
			header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("postmark:"+req.Secret)))
		}
		return body, nil
	}
}

// send posts the callback and reports what the service answered.
func (s callbackSender) send(ctx context.Context, req CallbackRequest, body []byte, header http.Header) (*CallbackResult, int, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(body))
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	hreq.Header = header
	resp, err := s.callbackClient().Do(hreq)
	if err != nil {
		return nil, http.StatusBadGateway, fmt.Errorf("posting the callback failed: %w", err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	sent := map[string]string{}
	for k := range header {
		sent[k] = header.Get(k)
	}
	return &CallbackResult{Status: resp.StatusCode, Body: string(rb), MessageID: req.MessageID, Payload: string(body), Headers: sent}, 0, nil
}

func (s callbackSender) callbackClient() *http.Client {
	s.callbacks.mu.Lock()
	defer s.callbacks.mu.Unlock()
	if s.callbacks.client == nil {
		s.callbacks.client = &http.Client{Timeout: 15 * time.Second}
	}
	return s.callbacks.client
}

// snsBody builds a signed SNS message: a Notification carrying an SES
// event, or a SubscriptionConfirmation.
func (s callbackSender) snsBody(req CallbackRequest, now time.Time, header http.Header) ([]byte, error) {
	key, _, err := s.callbacks.signer()
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(req.CertBase, "/")
	arn := "arn:aws:sns:" + snsRegion + ":" + snsAccount + ":" + snsTopic
	m := map[string]string{
		"MessageId":        s.uuid(),
		"TopicArn":         arn,
		"Timestamp":        now.Format("2006-01-02T15:04:05.000Z"),
		"SignatureVersion": req.SignatureVersion,
		"SigningCertURL":   base + SNSCertificatePath,
	}
	var fields []string
	if req.Type == "subscription" {
		token := hex64(s.mac("sns-token" + m["MessageId"]))
		m["Type"] = "SubscriptionConfirmation"
		m["Token"] = token
		m["Message"] = "You have chosen to subscribe to the topic " + arn + ".\nTo confirm the subscription, visit the SubscribeURL included in this message."
		m["SubscribeURL"] = base + "/_sim/sns/confirm?Action=ConfirmSubscription&TopicArn=" + url.QueryEscape(arn) + "&Token=" + token
		fields = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
		header.Set("x-amz-sns-message-type", "SubscriptionConfirmation")
	} else {
		m["Type"] = "Notification"
		m["Message"] = string(sesEventJSON(req, s.uuid(), now))
		m["UnsubscribeURL"] = base + "/_sim/sns/unsubscribe?SubscriptionArn=" + url.QueryEscape(arn+":sim")
		fields = []string{"Message", "MessageId", "Timestamp", "TopicArn", "Type"}
		header.Set("x-amz-sns-message-type", "Notification")
	}
	header.Set("x-amz-sns-message-id", m["MessageId"])
	header.Set("x-amz-sns-topic-arn", arn)
	var sts strings.Builder
	for _, f := range fields {
		sts.WriteString(f + "\n" + m[f] + "\n")
	}
	var sig []byte
	if req.SignatureVersion == "2" {
		d := sha256.Sum256([]byte(sts.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, d[:])
	} else {
		d := sha1.Sum([]byte(sts.String())) //nolint:gosec
		sig, err = rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA1, d[:])
	}
	if err != nil {
		return nil, err
	}
	m["Signature"] = base64.StdEncoding.EncodeToString(sig)
	return json.Marshal(m)
}

func hex64(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

// sesEventJSON is SES's notification JSON (notificationType Bounce or
// Complaint) for one recipient.
func sesEventJSON(req CallbackRequest, feedbackID string, now time.Time) []byte {
	ts := now.Format("2006-01-02T15:04:05.000Z")
	mail := map[string]any{"timestamp": ts, "source": "sender@example.com", "messageId": req.MessageID,
		"destination": []string{req.To}, "sourceArn": "arn:aws:ses:" + snsRegion + ":" + snsAccount + ":identity/example.com"}
	ev := map[string]any{"mail": mail}
	if req.Type == "delivery" {
		ev["notificationType"] = "Delivery"
		ev["delivery"] = map[string]any{"timestamp": ts, "processingTimeMillis": 546, "recipients": []string{req.To},
			"smtpResponse": "250 ok dirdel", "reportingMTA": "a8-70.smtp-out.amazonses.com"}
	} else if req.Type == "complaint" {
		ev["notificationType"] = "Complaint"
		ev["complaint"] = map[string]any{"feedbackId": feedbackID, "timestamp": ts, "complaintFeedbackType": "abuse",
			"userAgent": "Amazon SES Mailbox Simulator", "complainedRecipients": []map[string]string{{"emailAddress": req.To}}}
	} else {
		ev["notificationType"] = "Bounce"
		b := map[string]any{"feedbackId": feedbackID, "timestamp": ts, "reportingMTA": "dsn; a8-70.smtp-out.amazonses.com"}
		if req.BounceType == "transient" {
			b["bounceType"], b["bounceSubType"] = "Transient", "MailboxFull"
			b["bouncedRecipients"] = []map[string]string{{"emailAddress": req.To, "action": "failed", "status": "4.2.2",
				"diagnosticCode": "smtp; 452 4.2.2 Mailbox full"}}
		} else {
			b["bounceType"], b["bounceSubType"] = "Permanent", "General"
			b["bouncedRecipients"] = []map[string]string{{"emailAddress": req.To, "action": "failed", "status": "5.1.1",
				"diagnosticCode": "smtp; 550 5.1.1 user unknown"}}
		}
		ev["bounce"] = b
	}
	out, _ := json.Marshal(ev)
	return out
}

// resendBody is a Resend webhook event (email.bounced or email.complained).
func resendBody(req CallbackRequest, now time.Time) []byte {
	data := map[string]any{"created_at": now.Add(-time.Second).Format(time.RFC3339Nano), "email_id": req.MessageID,
		"from": "Acme <sender@example.com>", "to": []string{req.To}, "subject": "Simulated message"}
	typ := "email.complained"
	if req.Type == "delivery" {
		typ = "email.delivered"
	}
	if req.Type == "bounce" {
		typ = "email.bounced"
		if req.BounceType == "transient" {
			data["bounce"] = map[string]string{"message": "The recipient's mailbox is full.", "subType": "MailboxFull", "type": "Transient"}
		} else {
			data["bounce"] = map[string]string{"message": "The recipient's email address does not exist.", "subType": "General", "type": "Permanent"}
		}
	}
	out, _ := json.Marshal(map[string]any{"type": typ, "created_at": now.Format(time.RFC3339Nano), "data": data})
	return out
}

// svixSign sets the Svix headers: v1 = base64 HMAC-SHA256 keyed with the
// decoded whsec_ secret over "id.timestamp.body".
func svixSign(secret, id string, now time.Time, body []byte, h http.Header) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return errors.New("secret must be whsec_ followed by base64")
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	h.Set("svix-id", id)
	h.Set("svix-timestamp", ts)
	h.Set("svix-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return nil
}

// postmarkBody is a Postmark bounce or spam-complaint webhook.
func postmarkBody(req CallbackRequest, id uint64, now time.Time) []byte {
	ev := map[string]any{"ID": id, "MessageID": req.MessageID, "Email": req.To, "From": "sender@example.com",
		"BouncedAt": now.Format(time.RFC3339Nano), "ServerID": 23, "MessageStream": "outbound", "Tag": "",
		"DumpAvailable": false, "Subject": "Simulated message", "Metadata": map[string]string{}}
	switch {
	case req.Type == "delivery":
		ev = map[string]any{"RecordType": "Delivery", "ServerID": 23, "MessageStream": "outbound", "MessageID": req.MessageID,
			"Recipient": req.To, "Tag": "", "DeliveredAt": now.Format(time.RFC3339Nano), "Details": "Test delivery webhook details",
			"Metadata": map[string]string{}}
	case req.Type == "complaint":
		ev["RecordType"], ev["Type"], ev["TypeCode"], ev["Name"] = "SpamComplaint", "SpamComplaint", 512, "Spam complaint"
		ev["Description"], ev["Details"], ev["Inactive"], ev["CanActivate"] = "The subscriber explicitly marked this message as spam.", "Test spam complaint details", true, false
	case req.BounceType == "transient":
		ev["RecordType"], ev["Type"], ev["TypeCode"], ev["Name"] = "Bounce", "SoftBounce", 4096, "Soft bounce"
		ev["Description"], ev["Details"], ev["Inactive"], ev["CanActivate"] = "Unable to temporarily deliver this message.", "smtp;452 4.2.2 Mailbox full", false, true
	default:
		ev["RecordType"], ev["Type"], ev["TypeCode"], ev["Name"] = "Bounce", "HardBounce", 1, "Hard bounce"
		ev["Description"], ev["Details"], ev["Inactive"], ev["CanActivate"] = "The server was unable to deliver your message (ex: unknown user, mailbox not found).", "smtp;550 5.1.1 user unknown", true, true
	}
	out, _ := json.Marshal(ev)
	return out
}
