// Package demo is demo mode (`notifyd serve --demo`, issue "Try it in one
// minute"), attached to the daemon by the command so that only commands
// import the provider simulator.
package demo

// Demo mode (`notifyd serve --demo`, issue "Try it in one minute").
//
// Besides serving as usual, the daemon runs the provider simulator in
// process on 127.0.0.1:9090 (or a free loopback port when 9090 is taken)
// and, on every start, prepares a dedicated workspace named "Demo" (owner
// demo@notifyd.local, created on the first demo start, found again by that
// email afterwards):
//
//   - one provider account per kind, all twelve, pointed at the simulator
//     (created once, their configJson rewritten on every start since the
//     simulator's address may change);
//   - routes for every channel (the demo workspace's routes are replaced);
//   - an approved msgr_alimtalk template DEMO_WELCOME;
//   - a new API key with all four scopes (secrets are shown only once, so
//     every start mints a fresh one).
//
// It then prints the key, its HMAC secret, the simulator URL and a ready
// `notifyd send` line. Other workspaces are never touched. Demo mode also
// turns the SSRF guard off for provider calls, as the simulator is on
// loopback; NOTIFYD_ALLOW_PRIVATE_TARGETS is left alone otherwise.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider/kinds"
	"github.com/notifyd/notifyd/internal/providers"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/templates"
	"github.com/notifyd/notifyd/internal/usecase"
)

const (
	demoWorkspaceName = "Demo"
	demoOwnerEmail    = "demo@notifyd.local"
	demoSimAddr       = "127.0.0.1:9090"
	demoTemplateCode  = "DEMO_WELCOME"
	demoFCMProject    = "notifyd-demo"
)

// Demo is what demo mode runs besides the daemon: a daemon.Addon.
type Demo struct {
	d      *daemon.Daemon
	sim    *simulator.Simulator
	srv    *http.Server
	simURL string
}

// Attach makes d run demo mode once it listens.
func Attach(d *daemon.Daemon) *Demo {
	m := &Demo{}
	d.Addons = append(d.Addons, m)
	return m
}

// Simulator is the in-process provider simulator, nil before Start.
func (m *Demo) Simulator() *simulator.Simulator { return m.sim }

// Start starts the simulator, prepares the demo workspace and prints how
// to send. The daemon runs it after listen, so that the printed URL is
// final.
func (m *Demo) Start(ctx context.Context, d *daemon.Daemon) error {
	m.d = d
	if d.Config.Role != "all" {
		return errors.New("--demo needs --role all: the simulator runs in the process that sends")
	}
	ln, err := net.Listen("tcp", demoSimAddr)
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return fmt.Errorf("demo: simulator listener: %w", err)
		}
	}
	sim := simulator.New()
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	m.sim, m.srv, m.simURL = sim, srv, "http://"+ln.Addr().String()
	d.SNS.TrustHost(ln.Addr().String()) // the simulator signs SES bounce callbacks
	go func() { _ = srv.Serve(ln) }()
	d.Logger.Info("demo: provider simulator listening", "url", m.simURL)

	actor, login, err := m.demoWorkspace(ctx)
	if err != nil {
		return fmt.Errorf("demo: workspace: %w", err)
	}
	if err := m.demoProviders(ctx, actor); err != nil {
		return fmt.Errorf("demo: providers: %w", err)
	}
	if err := m.demoTemplate(ctx, actor); err != nil {
		return fmt.Errorf("demo: template: %w", err)
	}
	name := "Demo key " + time.Now().UTC().Format("2006-01-02 15:04:05")
	scopes := append([]string(nil), notify.Scopes...)
	key, err := d.Rooms.Accounts.CreateAPIKey(ctx, actor, accounts.APIKeyInput{Name: &name, Scopes: &scopes})
	if err != nil {
		return fmt.Errorf("demo: api key: %w", err)
	}
	m.printDemo(actor.WorkspaceID, login, key)
	return nil
}

// Close stops the simulator. The daemon runs it after the workers have
// stopped, so nothing of ours is still sending; Close, unlike Shutdown,
// does not wait 5 s for connections the provider client dialed but never
// used.
func (m *Demo) Close() error {
	if m.srv == nil {
		return nil
	}
	return m.srv.Close()
}

// demoWorkspace finds the demo workspace by its owner's email, creating
// both on the first demo start (login is then the one-time password).
func (m *Demo) demoWorkspace(ctx context.Context) (actor *usecase.Actor, login *accounts.BootstrapResult, err error) {
	d := m.d
	find := func() (*usecase.Actor, error) {
		var a *usecase.Actor
		err := d.DB.View(ctx, func(tx notify.Tx) error {
			u, err := tx.FindUserByEmail(ctx, demoOwnerEmail)
			if err != nil {
				return err
			}
			ms, err := tx.FindMembershipsOfUser(ctx, u.ID)
			if err != nil {
				return err
			}
			for _, m := range ms {
				if m.Role == notify.RoleOwner {
					a = &usecase.Actor{UserID: u.ID, Email: u.Email, WorkspaceID: m.WorkspaceID, Role: m.Role}
					return nil
				}
			}
			return notify.ErrNotFound
		})
		return a, err
	}
	actor, err = find()
	if err == nil || !notify.IsNotFound(err) {
		return actor, nil, err
	}
	res, err := d.Rooms.Accounts.Bootstrap(ctx, demoWorkspaceName, demoOwnerEmail, "")
	if errors.Is(err, accounts.ErrEmailTaken) {
		actor, err = find()
		return actor, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	return &usecase.Actor{UserID: res.UserID, Email: res.Email, WorkspaceID: res.WorkspaceID, Role: notify.RoleOwner}, res, nil
}

// demoProviders registers (or re-points) one simulated account per kind
// and routes every channel to them, in kind order.
func (m *Demo) demoProviders(ctx context.Context, actor *usecase.Actor) error {
	d := m.d
	var existing []*notify.ProviderAccount
	if err := d.DB.View(ctx, func(tx notify.Tx) (err error) {
		existing, err = tx.FindProviderAccounts(ctx, actor.WorkspaceID)
		return err
	}); err != nil {
		return err
	}
	reg := kinds.All()
	var routes []providers.RouteInput
	prio := map[notify.Channel]int{}
	on := true
	for _, kind := range reg.IDs() {
		cfg, err := m.demoConfig(kind)
		if err != nil {
			return err
		}
		name := "Simulated " + kind
		var acc *notify.ProviderAccount
		for _, p := range existing {
			if p.ProviderKind == kind && p.DisplayName == name {
				acc = p
				break
			}
		}
		in := providers.ProviderInput{ProviderKind: kind, DisplayName: &name, ConfigJSON: cfg, SetConfig: true, Enabled: &on}
		if acc == nil {
			acc, err = d.Rooms.Providers.CreateProvider(ctx, actor, in)
		} else {
			acc, err = d.Rooms.Providers.UpdateProvider(ctx, actor, acc.ID, in)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		prio[acc.Channel]++
		routes = append(routes, providers.RouteInput{Channel: string(acc.Channel), ProviderAccountID: acc.ID, Priority: prio[acc.Channel], Enabled: &on})
	}
	_, err := d.Rooms.Providers.ReplaceRoutes(ctx, actor, routes)
	return err
}

// demoConfig is the configJson of a simulated account of kind.
func (m *Demo) demoConfig(kind string) (map[string]string, error) {
	u := m.simURL
	switch kind {
	case "vendora_sms":
		return map[string]string{"vendora_user_id": "notifyd-demo", "vendora_api_key": "demo-vendora-key",
			"vendora_sender": "0212345678", "base_url": u}, nil
	case "vendora_msgr":
		return map[string]string{"vendora_user_id": "notifyd-demo", "vendora_msgr_api_key": "demo-vendora-msgr-key",
			"vendora_sender": "0212345678", "base_url": u}, nil
	case "vendorb_sms", "vendorb_msgr":
		return map[string]string{"vendorb_api_key": "demo-vendorb-key", "vendorb_api_secret": "demo-vendorb-secret",
			"vendorb_sender": "0298765432", "base_url": u}, nil
	case "push_gateway":
		sa, err := demoServiceAccount(u)
		if err != nil {
			return nil, err
		}
		return map[string]string{"push_service_account_json": sa, "base_url": u}, nil
	case "mailx_email":
		return map[string]string{"mailx_api_key": "re_demo_key", "mailx_from_email": "Notifyd Demo <demo@example.com>", "base_url": u}, nil
	case "maily_email":
		return map[string]string{"maily_access_key_id": "AKIADEMO000000000001", "maily_secret_access_key": "demo-secret-access-key",
			"maily_region": "us-east-1", "maily_from_email": "demo@example.com", "maily_from_name": "Notifyd Demo", "base_url": u}, nil
	case "mailz_email":
		return map[string]string{"mailz_api_key": "demo-postmark-token", "mailz_from_email": "demo@example.com",
			"mailz_from_name": "Notifyd Demo", "base_url": u}, nil
	case "chata_webhook":
		return map[string]string{"chata_webhook_url": u + "/services/TDEMO/BDEMO/demo"}, nil
	case "chata_bot":
		return map[string]string{"chata_bot_token": "xoxb-demo-token", "base_url": u}, nil
	case "chatb_webhook":
		return map[string]string{"chatb_webhook_url": u + "/api/webhooks/100000000000000000/demo-token"}, nil
	case "chatb_bot":
		return map[string]string{"chatb_bot_token": "demo-discord-bot-token", "base_url": u}, nil
	}
	return nil, fmt.Errorf("no demo config for kind %s", kind)
}

// demoServiceAccount is a Google service-account key file with a fresh
// RSA key whose token_uri is the simulator.
func demoServiceAccount(simURL string) (string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     demoFCMProject,
		"private_key_id": "0123456789abcdef0123456789abcdef01234567",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "notifyd@" + demoFCMProject + ".iam.gserviceaccount.com",
		"client_id":      "100000000000000000001",
		"token_uri":      simURL + "/token",
	})
	return string(b), err
}

// demoTemplate creates, publishes and approves the DEMO_WELCOME messenger
// template once.
func (m *Demo) demoTemplate(ctx context.Context, actor *usecase.Actor) error {
	d := m.d
	err := d.DB.View(ctx, func(tx notify.Tx) error {
		_, err := tx.FindTemplateByCode(ctx, actor.WorkspaceID, demoTemplateCode, notify.ChannelAlimTalk)
		return err
	})
	if err == nil || !notify.IsNotFound(err) {
		return err
	}
	code, ch, name := demoTemplateCode, string(notify.ChannelAlimTalk), "Demo welcome"
	vendorID, profile := demoTemplateCode, "demo-sender-profile"
	t, err := d.Rooms.Templates.CreateTemplate(ctx, actor, templates.TemplateInput{Code: &code, Channel: &ch, Name: &name,
		VendorTemplateID: &vendorID, SenderProfileKey: &profile})
	if err != nil {
		return err
	}
	text := "Hello {{name}}, welcome to notifyd!"
	v, err := d.Rooms.Templates.CreateTemplateVersion(ctx, actor, t.ID, templates.TemplateVersionInput{Text: &text})
	if err != nil {
		return err
	}
	if _, err := d.Rooms.Templates.PublishTemplateVersion(ctx, actor, t.ID, v.Version); err != nil {
		return err
	}
	_, err = d.Rooms.Templates.SetReviewStatus(ctx, actor, t.ID, templates.ReviewApproved)
	return err
}

// demoURL is the server URL for clients on this host: an unspecified
// listen host (":8080") becomes 127.0.0.1.
func (m *Demo) demoURL() string {
	d := m.d
	host, port, err := net.SplitHostPort(d.Addr())
	if err != nil {
		return d.URL()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func (m *Demo) printDemo(workspaceID string, login *accounts.BootstrapResult, key *accounts.NewAPIKey) {
	d := m.d
	var b strings.Builder
	sim := m.simURL
	fmt.Fprintf(&b, "notifyd demo: workspace %s (%s) has a simulated provider of every kind, routes for every channel\n", demoWorkspaceName, workspaceID)
	fmt.Fprintf(&b, "  and the approved messenger template %s. Providers answer from the simulator at %s.\n", demoTemplateCode, sim)
	if login != nil {
		fmt.Fprintf(&b, "  Dashboard login of the demo workspace (shown once): %s / %s\n", login.Email, login.Password)
	}
	fmt.Fprintf(&b, "  Web console: %s/ (log in with the dashboard login)\n", m.demoURL())
	fmt.Fprintf(&b, "\nAn API key with all scopes (a new one on every demo start):\n\n")
	fmt.Fprintf(&b, "  export NOTIFYD_URL=%s\n", m.demoURL())
	fmt.Fprintf(&b, "  export NOTIFYD_API_KEY=%s\n", key.Token)
	fmt.Fprintf(&b, "  export NOTIFYD_HMAC_SECRET=%s\n", key.HMACSecret)
	fmt.Fprintf(&b, "\nSend one and wait for it:\n\n")
	fmt.Fprintf(&b, "  notifyd send --channel sms --to 010-1234-5678 --text hi --wait\n")
	fmt.Fprintf(&b, "  notifyd send --channel msgr_alimtalk --to 010-1234-5678 --template %s --var name=Kim --wait\n", demoTemplateCode)
	fmt.Fprintf(&b, "\n(or `go run ./cmd/notifyd send ...` from a checkout). See what the vendors received:\n\n")
	fmt.Fprintf(&b, "  curl %s/_sim/messages\n\n", sim)
	fmt.Fprint(d.Stdout, b.String())
}
