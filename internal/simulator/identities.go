package simulator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sending identities of the e-mail vendors: SES v2 email identities,
// Resend domains, Postmark domains and sender signatures. Each kind has one
// vendor account here; an identity starts pending and is verified only
// through the control API (POST /_sim/identities/verify), standing for the
// vendor seeing the DNS records or the confirmation click.

// simIdentity is one identity of one vendor account.
type simIdentity struct {
	Kind           string    `json:"kind"`
	Type           string    `json:"type"` // email_address | domain
	Name           string    `json:"name"`
	ID             string    `json:"id"` // Resend uuid, Postmark number; SES names identities by Name
	Verified       bool      `json:"verified"`
	MailFrom       string    `json:"mailFromDomain,omitempty"`
	Tokens         []string  `json:"dkimTokens,omitempty"` // SES Easy DKIM tokens
	DKIMHost       string    `json:"dkimHost,omitempty"`   // Postmark
	DKIMValue      string    `json:"dkimValue,omitempty"`  // Resend, Postmark
	VerifyRequests int       `json:"verifyRequests"`       // Resend verify, Postmark verifyDkim/verifyReturnPath calls
	CreatedAt      time.Time `json:"createdAt"`
}

type identityState struct {
	mu   sync.Mutex
	byID map[string]*simIdentity // kind + "\x00" + lower-case name
	seq  int64
}

// digestHex is the SHA-256 of s in hex: stable made-up keys and tokens.
func digestHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func identityKey(kind, name string) string { return kind + "\x00" + strings.ToLower(name) }

func (st *identityState) reset() {
	st.mu.Lock()
	st.byID = nil
	st.mu.Unlock()
}

// addIdentity creates an identity; false when the account has it already.
func (s *core) addIdentity(kind, name, mailFrom string, verified bool) (*simIdentity, bool) {
	st := &s.identities
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byID == nil {
		st.byID = map[string]*simIdentity{}
	}
	name = strings.ToLower(name)
	k := identityKey(kind, name)
	if _, ok := st.byID[k]; ok {
		return nil, false
	}
	st.seq++
	id := &simIdentity{Kind: kind, Type: "domain", Name: name, Verified: verified, MailFrom: mailFrom, CreatedAt: s.now().UTC()}
	if strings.Contains(name, "@") {
		id.Type = "email_address"
	}
	switch kind {
	case kindMailX:
		id.ID = s.uuid()
		id.DKIMValue = "p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ" + digestHex(name)[:32]
	case kindMailZ:
		id.ID = strconv.FormatInt(1000+st.seq, 10)
		id.DKIMHost = id.CreatedAt.Format("20060102150405") + "pm._domainkey." + name
		id.DKIMValue = "k=rsa;p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ" + digestHex(name)[:32]
	case kindMailY:
		id.ID = name
		if id.Type == "domain" {
			h := digestHex(name + s.uuid())
			id.Tokens = []string{h[:32], h[32:64], digestHex(h)[:32]}
		}
	}
	st.byID[k] = id
	c := *id
	return &c, true
}

// identity returns a copy of an identity, found by name or vendor id.
func (s *core) identity(kind, nameOrID string) (*simIdentity, bool) {
	st := &s.identities
	st.mu.Lock()
	defer st.mu.Unlock()
	if id, ok := st.byID[identityKey(kind, nameOrID)]; ok {
		c := *id
		return &c, true
	}
	for _, id := range st.byID {
		if id.Kind == kind && id.ID == nameOrID {
			c := *id
			return &c, true
		}
	}
	return nil, false
}

// updateIdentity applies f to the stored identity.
func (s *core) updateIdentity(kind, nameOrID string, f func(*simIdentity)) (*simIdentity, bool) {
	cur, ok := s.identity(kind, nameOrID)
	if !ok {
		return nil, false
	}
	st := &s.identities
	st.mu.Lock()
	defer st.mu.Unlock()
	id := st.byID[identityKey(kind, cur.Name)]
	f(id)
	c := *id
	return &c, true
}

// Identities lists the identities of kind (all kinds when empty), by name.
func (s *Simulator) Identities(kind string) []simIdentity { return s.identityList(kind) }

func (s *core) identityList(kind string) []simIdentity {
	st := &s.identities
	st.mu.Lock()
	defer st.mu.Unlock()
	out := []simIdentity{}
	for _, id := range st.byID {
		if kind == "" || id.Kind == kind {
			out = append(out, *id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind+out[i].Name < out[j].Kind+out[j].Name })
	return out
}

// IdentityRequest is the body of POST /_sim/identities and
// /_sim/identities/verify.
type IdentityRequest struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Verified bool   `json:"verified,omitempty"`
}

// AddIdentity creates an identity in the kind's vendor account, as the
// vendor's own console would (for adopt tests); false when it exists.
func (s *Simulator) AddIdentity(req IdentityRequest) bool {
	_, ok := s.addIdentity(req.Kind, req.Name, "", req.Verified)
	return ok
}

// VerifyIdentity marks an identity verified (DKIM, MAIL FROM and return
// path included); false when the kind's account has no such identity.
func (s *Simulator) VerifyIdentity(kind, name string) bool {
	_, ok := s.updateIdentity(kind, name, func(id *simIdentity) { id.Verified = true })
	return ok
}

var identityKinds = map[string]bool{kindMailX: true, kindMailY: true, kindMailZ: true}

// serveIdentityControl serves /_sim/identities; false for other paths.
func (s *Simulator) serveIdentityControl(w http.ResponseWriter, r *http.Request) bool {
	route := r.Method + " " + strings.TrimSuffix(r.URL.Path, "/")
	switch route {
	case "GET /_sim/identities":
		writeJSON(w, http.StatusOK, map[string]any{"identities": s.identityList(r.URL.Query().Get("kind"))})
	case "POST /_sim/identities", "POST /_sim/identities/verify":
		var req IdentityRequest
		if err := decodeStrict(r, &req); err != nil {
			controlError(w, http.StatusBadRequest, "invalid body: "+err.Error())
			return true
		}
		if !identityKinds[req.Kind] || req.Name == "" {
			controlError(w, http.StatusBadRequest, "kind must be mailx_email, maily_email or mailz_email, and name is required")
			return true
		}
		if route == "POST /_sim/identities" {
			id, ok := s.addIdentity(req.Kind, req.Name, "", req.Verified)
			if !ok {
				controlError(w, http.StatusConflict, "identity exists: "+req.Name)
				return true
			}
			writeJSON(w, http.StatusCreated, map[string]any{"identity": id})
			return true
		}
		id, ok := s.updateIdentity(req.Kind, req.Name, func(id *simIdentity) { id.Verified = true })
		if !ok {
			controlError(w, http.StatusNotFound, "no such identity: "+req.Name)
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"identity": id})
	default:
		return false
	}
	return true
}

// identityRoute finds the handler of an identity API path; methods are
// checked by the handlers (each path takes several).
func (s *Simulator) identityRoute(r *http.Request) http.HandlerFunc {
	p := r.URL.Path
	switch {
	case p == "/v2/email/identities" || strings.HasPrefix(p, "/v2/email/identities/"):
		return s.ses.sesIdentities
	case p == "/senders" || strings.HasPrefix(p, "/senders/"):
		return s.postmark.postmarkSenders
	case p == "/domains" || strings.HasPrefix(p, "/domains/"):
		// One path, two vendors: Postmark's account API carries its own
		// token header, Resend a bearer key.
		if r.Header.Get("X-Postmark-Account-Token") != "" || r.Header.Get("X-Postmark-Server-Token") != "" {
			return s.postmark.postmarkDomains
		}
		return s.resend.resendDomains
	}
	return nil
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "simulator: method not allowed", "method": r.Method, "path": r.URL.Path})
}

// pathRest splits the path after prefix into its segments (unescaped).
func pathRest(r *http.Request, prefix string) []string {
	rest := strings.Trim(strings.TrimPrefix(r.URL.EscapedPath(), prefix), "/")
	if rest == "" {
		return nil
	}
	parts := strings.Split(rest, "/")
	for i, x := range parts {
		if u, err := url.PathUnescape(x); err == nil {
			parts[i] = u
		}
	}
	return parts
}

// ---- SES v2 ----

func (s sesAPI) sesIdentityBody(id *simIdentity) map[string]any {
	status, dkim := "PENDING", "PENDING"
	if id.Verified {
		status, dkim = "SUCCESS", "SUCCESS"
	}
	out := map[string]any{"IdentityType": "DOMAIN", "FeedbackForwardingStatus": true, "VerifiedForSendingStatus": id.Verified,
		"VerificationStatus": status, "Policies": map[string]any{}, "Tags": []any{}}
	if id.Type == "email_address" {
		out["IdentityType"] = "EMAIL_ADDRESS"
		out["DkimAttributes"] = map[string]any{"SigningEnabled": false, "Status": "NOT_STARTED", "SigningAttributesOrigin": "AWS_SES"}
		return out
	}
	out["DkimAttributes"] = map[string]any{"SigningEnabled": true, "Status": dkim, "Tokens": id.Tokens,
		"SigningAttributesOrigin": "AWS_SES", "NextSigningKeyLength": "RSA_2048_BIT", "CurrentSigningKeyLength": "RSA_2048_BIT"}
	if id.MailFrom != "" {
		mf := "PENDING"
		if id.Verified {
			mf = "SUCCESS"
		}
		out["MailFromAttributes"] = map[string]any{"MailFromDomain": id.MailFrom, "MailFromDomainStatus": mf, "BehaviorOnMxFailure": "USE_DEFAULT_VALUE"}
	}
	return out
}

// sesIdentities serves CreateEmailIdentity (POST /v2/email/identities),
// ListEmailIdentities (GET, same path), GetEmailIdentity (GET
// /v2/email/identities/{name}) and PutEmailIdentityMailFromAttributes (PUT
// /v2/email/identities/{name}/mail-from).
func (s sesAPI) sesIdentities(w http.ResponseWriter, r *http.Request) {
	if typ, msg := s.sesAuthError(r); typ != "" {
		s.sesError(w, sesStatus[typ], typ, msg)
		return
	}
	rest := pathRest(r, "/v2/email/identities")
	w.Header().Set("x-amzn-RequestId", s.uuid())
	switch {
	case len(rest) == 0 && r.Method == http.MethodPost:
		var in struct {
			EmailIdentity string `json:"EmailIdentity"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.EmailIdentity == "" {
			s.sesError(w, http.StatusBadRequest, "BadRequestException", "EmailIdentity is required.")
			return
		}
		if strings.Contains(in.EmailIdentity, "@") {
			if _, msg := sesAddress("EmailIdentity", in.EmailIdentity); msg != "" {
				s.sesError(w, http.StatusBadRequest, "BadRequestException", msg)
				return
			}
		}
		id, ok := s.addIdentity(kindMailY, in.EmailIdentity, "", false)
		if !ok {
			s.sesError(w, http.StatusBadRequest, "AlreadyExistsException", "Email identity "+in.EmailIdentity+" already exist.")
			return
		}
		body := s.sesIdentityBody(id)
		writeJSON(w, http.StatusOK, map[string]any{"IdentityType": body["IdentityType"], "VerifiedForSendingStatus": false,
			"DkimAttributes": body["DkimAttributes"]})
	case len(rest) == 0 && r.Method == http.MethodGet:
		list := []map[string]any{}
		for _, id := range s.identityList(kindMailY) {
			b := s.sesIdentityBody(&id)
			list = append(list, map[string]any{"IdentityType": b["IdentityType"], "IdentityName": id.Name,
				"SendingEnabled": true, "VerificationStatus": b["VerificationStatus"]})
		}
		writeJSON(w, http.StatusOK, map[string]any{"EmailIdentities": list})
	case len(rest) == 0:
		methodNotAllowed(w, r, "GET, POST")
	case len(rest) == 1 && r.Method == http.MethodGet:
		id, ok := s.identity(kindMailY, rest[0])
		if !ok {
			s.sesError(w, http.StatusNotFound, "NotFoundException", "Email identity "+rest[0]+" does not exist.")
			return
		}
		writeJSON(w, http.StatusOK, s.sesIdentityBody(id))
	case len(rest) == 2 && rest[1] == "mail-from" && r.Method == http.MethodPut:
		var in struct {
			MailFromDomain      string `json:"MailFromDomain"`
			BehaviorOnMxFailure string `json:"BehaviorOnMxFailure"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			s.sesError(w, http.StatusBadRequest, "BadRequestException", "Invalid JSON: "+err.Error())
			return
		}
		if b := in.BehaviorOnMxFailure; b != "" && b != "USE_DEFAULT_VALUE" && b != "REJECT_MESSAGE" {
			s.sesError(w, http.StatusBadRequest, "BadRequestException", "BehaviorOnMxFailure must be USE_DEFAULT_VALUE or REJECT_MESSAGE.")
			return
		}
		name := strings.ToLower(rest[0])
		if mf := strings.ToLower(in.MailFromDomain); mf != "" && !strings.HasSuffix(mf, "."+name) {
			s.sesError(w, http.StatusBadRequest, "BadRequestException", "MailFromDomain "+in.MailFromDomain+" must be a subdomain of "+rest[0]+".")
			return
		}
		if _, ok := s.updateIdentity(kindMailY, name, func(id *simIdentity) { id.MailFrom = strings.ToLower(in.MailFromDomain) }); !ok {
			s.sesError(w, http.StatusNotFound, "NotFoundException", "Email identity "+rest[0]+" does not exist.")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
	case len(rest) == 1 || (len(rest) == 2 && rest[1] == "mail-from"):
		methodNotAllowed(w, r, map[bool]string{true: "GET", false: "PUT"}[len(rest) == 1])
	default:
		s.sesError(w, http.StatusNotFound, "NotFoundException", "Unknown operation: "+r.Method+" "+r.URL.Path)
	}
}

// ---- Resend ----

func resendDomainBody(id *simIdentity, withRecords bool) map[string]any {
	status := "not_started"
	switch {
	case id.Verified:
		status = "verified"
	case id.VerifyRequests > 0:
		status = "pending"
	}
	out := map[string]any{"object": "domain", "id": id.ID, "name": id.Name, "status": status,
		"created_at": id.CreatedAt.Format("2006-01-02 15:04:05.000000+00"), "region": "us-east-1"}
	if !withRecords {
		return out
	}
	ret := "send"
	if id.MailFrom != "" {
		ret = strings.TrimSuffix(id.MailFrom, "."+id.Name)
	}
	out["records"] = []map[string]any{
		{"record": "SPF", "name": ret, "type": "MX", "ttl": "Auto", "status": status, "value": "feedback-smtp.us-east-1.amazonses.com", "priority": 10},
		{"record": "SPF", "name": ret, "value": `"v=spf1 include:amazonses.com ~all"`, "type": "TXT", "ttl": "Auto", "status": status},
		{"record": "DKIM", "name": "resend._domainkey", "value": id.DKIMValue, "type": "TXT", "ttl": "Auto", "status": status},
	}
	return out
}

// resendDomains serves POST /domains, GET /domains, GET /domains/{id} and
// POST /domains/{id}/verify.
func (s resendAPI) resendDomains(w http.ResponseWriter, r *http.Request) {
	if !resendAuth(w, r) {
		return
	}
	rest := pathRest(r, "/domains")
	switch {
	case len(rest) == 0 && r.Method == http.MethodPost:
		var in struct {
			Name             string `json:"name"`
			Region           string `json:"region"`
			CustomReturnPath string `json:"custom_return_path"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			resendError(w, http.StatusUnprocessableEntity, "validation_error", "Invalid JSON: "+err.Error())
			return
		}
		if in.Name == "" {
			resendError(w, http.StatusUnprocessableEntity, "missing_required_field", "Missing `name` field.")
			return
		}
		if strings.Contains(in.Name, "@") || !strings.Contains(in.Name, ".") {
			resendError(w, http.StatusUnprocessableEntity, "validation_error", "The `name` field must be a valid domain.")
			return
		}
		mf := ""
		if in.CustomReturnPath != "" {
			mf = strings.ToLower(in.CustomReturnPath) + "." + strings.ToLower(in.Name)
		}
		id, ok := s.addIdentity(kindMailX, in.Name, mf, false)
		if !ok {
			resendError(w, http.StatusUnprocessableEntity, "validation_error", "The domain "+in.Name+" has already been registered.")
			return
		}
		writeJSON(w, http.StatusOK, resendDomainBody(id, true))
	case len(rest) == 0 && r.Method == http.MethodGet:
		data := []map[string]any{}
		for _, id := range s.identityList(kindMailX) {
			data = append(data, resendDomainBody(&id, false))
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "has_more": false, "data": data})
	case len(rest) == 1 && r.Method == http.MethodGet:
		id, ok := s.identity(kindMailX, rest[0])
		if !ok || id.ID != rest[0] {
			resendError(w, http.StatusNotFound, "not_found", "Domain not found")
			return
		}
		writeJSON(w, http.StatusOK, resendDomainBody(id, true))
	case len(rest) == 2 && rest[1] == "verify" && r.Method == http.MethodPost:
		id, ok := s.updateIdentity(kindMailX, rest[0], func(id *simIdentity) { id.VerifyRequests++ })
		if !ok || id.ID != rest[0] {
			resendError(w, http.StatusNotFound, "not_found", "Domain not found")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "domain", "id": id.ID})
	case len(rest) == 0:
		methodNotAllowed(w, r, "GET, POST")
	default:
		resendError(w, http.StatusNotFound, "not_found", "Not found: "+r.Method+" "+r.URL.Path)
	}
}

// ---- Postmark ----

// postmarkAccountAuth requires X-Postmark-Account-Token (the server token
// does not reach the account API: 401 ErrorCode 10).
func postmarkAccountAuth(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("X-Postmark-Account-Token") == "" {
		postmarkError(w, http.StatusUnauthorized, pmBadToken, "No Account API token provided in the request headers (X-Postmark-Account-Token).")
		return false
	}
	return true
}

func postmarkDomainBody(id *simIdentity) map[string]any {
	id64, _ := strconv.ParseInt(id.ID, 10, 64)
	out := map[string]any{"ID": id64, "Name": id.Name, "SPFVerified": id.Verified, "SPFHost": id.Name,
		"SPFTextValue": "v=spf1 a mx include:spf.mtasv.net ~all", "DKIMVerified": id.Verified, "WeakDKIM": false,
		"DKIMHost": "", "DKIMTextValue": "", "DKIMPendingHost": id.DKIMHost, "DKIMPendingTextValue": id.DKIMValue,
		"DKIMRevokedHost": "", "DKIMRevokedTextValue": "", "SafeToRemoveRevokedKeyFromDNS": false, "DKIMUpdateStatus": "Pending",
		"ReturnPathDomain": id.MailFrom, "ReturnPathDomainVerified": id.Verified && id.MailFrom != "", "ReturnPathDomainCNAMEValue": "pm.mtasv.net"}
	if id.Verified {
		out["DKIMHost"], out["DKIMTextValue"], out["DKIMPendingHost"], out["DKIMPendingTextValue"] = id.DKIMHost, id.DKIMValue, "", ""
		out["DKIMUpdateStatus"] = "Verified"
	}
	return out
}

func postmarkSenderBody(id *simIdentity) map[string]any {
	id64, _ := strconv.ParseInt(id.ID, 10, 64)
	return map[string]any{"ID": id64, "Domain": id.Name[strings.LastIndexByte(id.Name, '@')+1:], "EmailAddress": id.Name,
		"ReplyToEmailAddress": "", "Name": "", "Confirmed": id.Verified}
}

// postmarkDomains serves POST /domains, GET /domains?count&offset, GET
// /domains/{id}, PUT /domains/{id}/verifyDkim and /verifyReturnPath.
func (s postmarkAPI) postmarkDomains(w http.ResponseWriter, r *http.Request) {
	if !postmarkAccountAuth(w, r) {
		return
	}
	rest := pathRest(r, "/domains")
	notFound := func() { postmarkError(w, http.StatusUnprocessableEntity, 510, "This domain was not found.") }
	find := func(idStr string) (*simIdentity, bool) {
		id, ok := s.identity(kindMailZ, idStr)
		return id, ok && id.ID == idStr && id.Type == "domain"
	}
	switch {
	case len(rest) == 0 && r.Method == http.MethodPost:
		var in struct {
			Name             string `json:"Name"`
			ReturnPathDomain string `json:"ReturnPathDomain"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			postmarkError(w, http.StatusUnprocessableEntity, 402, "Invalid JSON.")
			return
		}
		if in.Name == "" || strings.Contains(in.Name, "@") || !strings.Contains(in.Name, ".") {
			postmarkError(w, http.StatusUnprocessableEntity, 511, "Invalid fields supplied: Name must be a domain.")
			return
		}
		rp := strings.ToLower(in.ReturnPathDomain)
		if rp != "" && !strings.HasSuffix(rp, "."+strings.ToLower(in.Name)) {
			postmarkError(w, http.StatusUnprocessableEntity, 511, "Invalid fields supplied: ReturnPathDomain must be a subdomain of Name.")
			return
		}
		id, ok := s.addIdentity(kindMailZ, in.Name, rp, false)
		if !ok {
			// UNCONFIRMED code; the adapter reads the message.
			postmarkError(w, http.StatusUnprocessableEntity, 511, "This domain already exists.")
			return
		}
		writeJSON(w, http.StatusOK, postmarkDomainBody(id))
	case len(rest) == 0 && r.Method == http.MethodGet:
		q := r.URL.Query()
		count, err1 := strconv.Atoi(q.Get("count"))
		offset, err2 := strconv.Atoi(q.Get("offset"))
		if err1 != nil || err2 != nil || count < 1 || count > 500 || offset < 0 {
			postmarkError(w, http.StatusUnprocessableEntity, 511, "Invalid fields supplied: count (1-500) and offset are required.")
			return
		}
		list := []map[string]any{}
		for _, id := range s.identityList(kindMailZ) {
			if id.Type == "domain" {
				b := postmarkDomainBody(&id)
				list = append(list, map[string]any{"ID": b["ID"], "Name": id.Name, "SPFVerified": id.Verified, "DKIMVerified": id.Verified,
					"WeakDKIM": false, "ReturnPathDomainVerified": b["ReturnPathDomainVerified"]})
			}
		}
		total := len(list)
		list = list[min(offset, total):min(offset+count, total)]
		writeJSON(w, http.StatusOK, map[string]any{"TotalCount": total, "Domains": list})
	case len(rest) == 1 && r.Method == http.MethodGet:
		id, ok := find(rest[0])
		if !ok {
			notFound()
			return
		}
		writeJSON(w, http.StatusOK, postmarkDomainBody(id))
	case len(rest) == 2 && (rest[1] == "verifyDkim" || rest[1] == "verifyReturnPath") && r.Method == http.MethodPut:
		if _, ok := find(rest[0]); !ok {
			notFound()
			return
		}
		id, _ := s.updateIdentity(kindMailZ, rest[0], func(id *simIdentity) { id.VerifyRequests++ })
		writeJSON(w, http.StatusOK, postmarkDomainBody(id))
	case len(rest) == 0:
		methodNotAllowed(w, r, "GET, POST")
	default:
		postmarkError(w, http.StatusNotFound, 0, fmt.Sprintf("Not found: %s %s", r.Method, r.URL.Path))
	}
}

// postmarkSenders serves POST /senders, GET /senders?count&offset and GET
// /senders/{id}.
func (s postmarkAPI) postmarkSenders(w http.ResponseWriter, r *http.Request) {
	if !postmarkAccountAuth(w, r) {
		return
	}
	rest := pathRest(r, "/senders")
	switch {
	case len(rest) == 0 && r.Method == http.MethodPost:
		var in struct {
			FromEmail        string `json:"FromEmail"`
			Name             string `json:"Name"`
			ReplyToEmail     string `json:"ReplyToEmail"`
			ReturnPathDomain string `json:"ReturnPathDomain"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			postmarkError(w, http.StatusUnprocessableEntity, 402, "Invalid JSON.")
			return
		}
		if _, msg := sesAddress("FromEmail", in.FromEmail); msg != "" || in.FromEmail == "" {
			postmarkError(w, http.StatusUnprocessableEntity, 300, "Invalid 'FromEmail' address.")
			return
		}
		id, ok := s.addIdentity(kindMailZ, in.FromEmail, "", false)
		if !ok {
			postmarkError(w, http.StatusUnprocessableEntity, 504, "This signature already exists.")
			return
		}
		writeJSON(w, http.StatusOK, postmarkSenderBody(id))
	case len(rest) == 0 && r.Method == http.MethodGet:
		list := []map[string]any{}
		for _, id := range s.identityList(kindMailZ) {
			if id.Type == "email_address" {
				list = append(list, postmarkSenderBody(&id))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"TotalCount": len(list), "SenderSignatures": list})
	case len(rest) == 1 && r.Method == http.MethodGet:
		id, ok := s.identity(kindMailZ, rest[0])
		if !ok || id.ID != rest[0] || id.Type != "email_address" {
			postmarkError(w, http.StatusUnprocessableEntity, 501, "Sender Signature not found by id.")
			return
		}
		writeJSON(w, http.StatusOK, postmarkSenderBody(id))
	case len(rest) == 0:
		methodNotAllowed(w, r, "GET, POST")
	default:
		postmarkError(w, http.StatusNotFound, 0, fmt.Sprintf("Not found: %s %s", r.Method, r.URL.Path))
	}
}
