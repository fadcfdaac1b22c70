// Package deploy_test checks the packaging files (Dockerfile, compose.yaml,
// the systemd unit and the Kubernetes manifests) without Docker or a
// cluster: they parse, have the shape the README promises, and every
// setting they give notifyd is one it reads, with a value it accepts.
package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/notifyd/notifyd/internal/config"
)

// sampleKey stands for secrets (NOTIFYD_SECRET_KEY, its _FILE) in the
// settings checks.
const sampleKey = "0000000000000000000000000000000000000000000000000000000000000001"

// checkSettings asserts that every variable in env is a notifyd setting
// (or its _FILE form) and that serve would start with them and args: the
// values parse and validate.
func checkSettings(t *testing.T, where string, args []string, env map[string]string) {
	t.Helper()
	known := map[string]bool{}
	for _, o := range config.Options {
		if o.Env != "" {
			known[o.Env] = true
			if o.File {
				known[o.Env+"_FILE"] = true
			}
		}
	}
	for k := range env {
		require.True(t, known[k], "%s sets %s, which is no notifyd setting", where, k)
	}
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	} else {
		args = nil // migrate, bootstrap: no serve flags
	}
	_, rest, err := config.Load(args, func(k string) string { return env[k] },
		func(string) ([]byte, error) { return []byte(sampleKey), nil })
	require.NoError(t, err, "%s: %v", where, args)
	require.Empty(t, rest, where)
}

// instruction is one Dockerfile line (continuations joined).
type instruction struct{ cmd, args string }

func parseDockerfile(t *testing.T, path string) [][]instruction {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var stages [][]instruction
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || line == "" && cur == "" {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line, cur = cur+line, ""
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		require.NotEmpty(t, stages, "%s: %s before FROM", path, in.cmd)
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	require.NoError(t, sc.Err())
	return stages
}

func find(stage []instruction, cmd string) []string {
	var out []string
	for _, in := range stage {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// TestDockerfile: a build stage making a static binary, and a final stage
// that runs it as a non-root user with a data volume, a HEALTHCHECK the
// binary answers itself, the listen port exposed and valid settings.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, "../Dockerfile")
	require.GreaterOrEqual(t, len(stages), 2, "multi-stage")
	build, final := stages[0], stages[len(stages)-1]
	require.Regexp(t, `(?i)^golang:\S+ AS build$`, find(build, "FROM")[0])
	run := strings.Join(find(build, "RUN"), "\n")
	require.Contains(t, run, "CGO_ENABLED=0", "static binary")
	require.Contains(t, run, "./cmd/notifyd")
	require.Contains(t, run, "-X main.version=", "versioned build")
	require.Contains(t, run, "-X main.commit=")

	require.Contains(t, find(final, "COPY")[0], "--from=build")
	user := find(final, "USER")
	require.Len(t, user, 1)
	name, _, _ := strings.Cut(user[0], ":")
	require.NotContains(t, []string{"root", "0"}, name, "non-root")
	require.Equal(t, []string{`["/data"]`}, find(final, "VOLUME"))
	require.Equal(t, []string{"8080"}, find(final, "EXPOSE"))
	hc := find(final, "HEALTHCHECK")
	require.Len(t, hc, 1)
	require.Regexp(t, `CMD \["/notifyd", "healthcheck"\]$`, hc[0])
	require.Equal(t, []string{`["/notifyd"]`}, find(final, "ENTRYPOINT"))
	require.Equal(t, []string{`["serve"]`}, find(final, "CMD"))

	env := map[string]string{}
	for _, e := range find(final, "ENV") {
		for _, kv := range strings.Fields(e) {
			k, v, ok := strings.Cut(kv, "=")
			require.True(t, ok, kv)
			env[k] = v
		}
	}
	require.Equal(t, ":8080", env["NOTIFYD_ADDR"], "the exposed port")
	require.Equal(t, "sqlite:/data/notifyd.db", env["NOTIFYD_DATABASE_URL"], "the database in the volume")
	checkSettings(t, "Dockerfile", []string{"serve"}, env)
}

func readYAML(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var docs []map[string]any
	dec := yaml.NewDecoder(f)
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		require.NoError(t, err, path)
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(map[string]any)
		require.True(t, ok, "%v at %s is not a mapping", path, p)
		v = m[p]
	}
	return v
}

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// composeVar matches compose's ${VAR:-default} to the default.
var composeVar = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`)

// TestCompose: PostgreSQL, a one-shot migration that the notifyd services
// wait for, two api and two worker processes with --no-migrate, workers
// answering probes on NOTIFYD_HEALTH_ADDR, and a reverse proxy over both
// api processes; every notifyd setting is real and valid.
func TestCompose(t *testing.T) {
	t.Parallel()
	docs := readYAML(t, "../compose.yaml")
	require.Len(t, docs, 1)
	services := dig(t, docs[0], "services").(map[string]any)
	require.ElementsMatch(t, []string{"postgres", "migrate", "api1", "api2", "worker1", "worker2", "proxy"}, keys(services))
	require.Equal(t, []string{"migrate"}, strs(dig(t, services, "migrate", "command")))
	require.Equal(t, "service_healthy", dig(t, services, "migrate", "depends_on", "postgres", "condition"))

	for name, role := range map[string]string{"api1": "api", "api2": "api", "worker1": "worker", "worker2": "worker", "migrate": ""} {
		svc := services[name]
		cmd := strs(dig(t, svc, "command"))
		if role != "" {
			require.Equal(t, []string{"serve", "--role", role, "--no-migrate"}, cmd, name)
			require.Equal(t, "service_completed_successfully", dig(t, svc, "depends_on", "migrate", "condition"), name)
			require.NotNil(t, dig(t, svc, "build"), name)
		}
		env := map[string]string{}
		for k, v := range dig(t, svc, "environment").(map[string]any) {
			env[k] = composeVar.ReplaceAllString(v.(string), "$1")
		}
		require.Equal(t, "/run/secrets/notifyd_secret_key", env["NOTIFYD_SECRET_KEY_FILE"], name)
		require.Contains(t, strs(dig(t, svc, "secrets")), "notifyd_secret_key", name)
		require.Contains(t, env["NOTIFYD_DATABASE_URL"], "@postgres:5432/", name)
		if role == "worker" {
			require.Equal(t, ":8081", env["NOTIFYD_HEALTH_ADDR"], name)
		}
		if role == "api" {
			require.Equal(t, ":8080", env["NOTIFYD_ADDR"], name)
		}
		checkSettings(t, "compose "+name, cmd, env)
	}
	require.Equal(t, "./secrets/notifyd_secret_key", dig(t, docs[0], "secrets", "notifyd_secret_key", "file"))

	proxy := services["proxy"]
	require.Contains(t, strs(dig(t, proxy, "volumes")), "./deploy/caddy/Caddyfile:/etc/caddy/Caddyfile:ro")
	caddy, err := os.ReadFile("caddy/Caddyfile")
	require.NoError(t, err)
	require.Contains(t, string(caddy), "reverse_proxy api1:8080 api2:8080")
	require.Contains(t, string(caddy), "health_uri /readyz")
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestKubernetes: separate api and worker Deployments with readiness
// (/readyz) and liveness (/healthz) probes on a declared port, a migration
// Job, settings from a ConfigMap and secrets from the Secret, non-root
// pods; every notifyd setting real and valid.
func TestKubernetes(t *testing.T) {
	t.Parallel()
	kust := readYAML(t, "kubernetes/kustomization.yaml")[0]
	objects := map[string]map[string]any{} // kind/name
	for _, file := range append(strs(kust["resources"]), "secret.example.yaml") {
		for _, doc := range readYAML(t, filepath.Join("kubernetes", file)) {
			key := doc["kind"].(string) + "/" + dig(t, doc, "metadata", "name").(string)
			objects[key] = doc
		}
	}
	require.ElementsMatch(t, []string{"Namespace/notifyd", "ConfigMap/notifyd", "Secret/notifyd", "Job/notifyd-migrate",
		"Deployment/notifyd-api", "Service/notifyd-api", "Deployment/notifyd-worker"}, keys(anyMap(objects)))

	configMap := map[string]string{}
	for k, v := range dig(t, objects["ConfigMap/notifyd"], "data").(map[string]any) {
		configMap[k] = v.(string)
	}
	secret := dig(t, objects["Secret/notifyd"], "stringData").(map[string]any)

	for key, want := range map[string]struct {
		args []string
		port string
	}{
		"Deployment/notifyd-api":    {[]string{"serve", "--role", "api", "--no-migrate"}, "8080"},
		"Deployment/notifyd-worker": {[]string{"serve", "--role", "worker", "--no-migrate"}, "8081"},
		"Job/notifyd-migrate":       {[]string{"migrate"}, ""},
	} {
		pod := dig(t, objects[key], "spec", "template", "spec")
		require.Equal(t, true, dig(t, pod, "securityContext", "runAsNonRoot"), key)
		containers := dig(t, pod, "containers").([]any)
		require.Len(t, containers, 1, key)
		c := containers[0]
		require.Equal(t, want.args, strs(dig(t, c, "args")), key)

		env := map[string]string{}
		for k, v := range configMap {
			env[k] = v
		}
		require.Equal(t, "notifyd", dig(t, c, "envFrom").([]any)[0].(map[string]any)["configMapRef"].(map[string]any)["name"], key)
		for _, e := range dig(t, c, "env").([]any) {
			name := dig(t, e, "name").(string)
			if ref, ok := dig(t, e, "valueFrom").(map[string]any); ok {
				require.Equal(t, "notifyd", dig(t, ref, "secretKeyRef", "name"), key)
				require.Contains(t, secret, dig(t, ref, "secretKeyRef", "key"), key)
				env[name] = map[string]string{"NOTIFYD_SECRET_KEY": sampleKey}[name]
				if env[name] == "" {
					env[name] = secret[dig(t, ref, "secretKeyRef", "key").(string)].(string)
				}
				continue
			}
			env[name] = dig(t, e, "value").(string)
		}
		require.Contains(t, env, "NOTIFYD_SECRET_KEY", key)
		require.Contains(t, env, "NOTIFYD_DATABASE_URL", key)
		checkSettings(t, key, want.args, env)
		if want.port == "" {
			continue
		}
		require.Equal(t, int64(45), toInt(dig(t, pod, "terminationGracePeriodSeconds")), key)
		ports := map[string]string{}
		for _, p := range dig(t, c, "ports").([]any) {
			ports[dig(t, p, "name").(string)] = fmtInt(dig(t, p, "containerPort"))
		}
		addr := env["NOTIFYD_ADDR"]
		if want.args[2] == "worker" {
			addr = env["NOTIFYD_HEALTH_ADDR"]
		}
		require.Equal(t, ":"+want.port, addr, key)
		for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
			require.Equal(t, path, dig(t, c, probe, "httpGet", "path"), key+" "+probe)
			require.Equal(t, want.port, ports[dig(t, c, probe, "httpGet", "port").(string)], key+" "+probe)
		}
	}
	svc := objects["Service/notifyd-api"]
	require.Equal(t, "api", dig(t, svc, "spec", "selector", "app.kubernetes.io/component"))
}

func anyMap(m map[string]map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	}
	return -1
}

func fmtInt(v any) string {
	if n := toInt(v); n >= 0 {
		return strconv.FormatInt(n, 10)
	}
	return ""
}

// TestSystemdUnit: the unit runs serve with hardening options and valid
// settings.
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("systemd/notifyd.service")
	require.NoError(t, err)
	unit := map[string][]string{}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, line)
			unit[section+k] = append(unit[section+k], v)
		}
	}
	require.Equal(t, []string{"/usr/local/bin/notifyd serve"}, unit["[Service]ExecStart"])
	for k, v := range map[string]string{"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "DynamicUser": "yes", "StateDirectory": "notifyd", "RestrictSUIDSGID": "yes",
		"MemoryDenyWriteExecute": "yes", "CapabilityBoundingSet": "", "KillSignal": "SIGTERM"} {
		require.Equal(t, []string{v}, unit["[Service]"+k], k)
	}
	require.Equal(t, []string{"multi-user.target"}, unit["[Install]WantedBy"])
	env := map[string]string{}
	for _, e := range unit["[Service]Environment"] {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	require.Equal(t, "sqlite:/var/lib/notifyd/notifyd.db", env["NOTIFYD_DATABASE_URL"], "in the StateDirectory")
	checkSettings(t, "notifyd.service", []string{"serve"}, env)
	stop, err := time.ParseDuration(unit["[Service]TimeoutStopSec"][0])
	require.NoError(t, err)
	require.Greater(t, stop, config.Default().ShutdownTimeout, "systemd waits out the graceful stop")
}

// TestDockerBuild builds the image when a Docker daemon answers.
func TestDockerBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no image build")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not installed")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker daemon answers: %s", firstLine(out))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tag := "notifyd-test:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	out, err := exec.CommandContext(ctx, "docker", "build", "--build-arg", "VERSION=test", "--build-arg", "COMMIT=test",
		"-t", tag, "..").CombinedOutput()
	require.NoError(t, err, string(out))
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })
	out, err = exec.CommandContext(ctx, "docker", "run", "--rm", tag, "version").CombinedOutput()
	require.NoError(t, err, string(out))
	require.True(t, strings.HasPrefix(string(out), "notifyd test (commit test"), string(out))
	out, err = exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Config.User}}", tag).CombinedOutput()
	require.NoError(t, err, string(out))
	require.False(t, slices.Contains([]string{"", "root", "0"}, strings.TrimSpace(string(out))), string(out))
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// TestSystemdAnalyze asks systemd itself, when systemd-analyze is
// installed: the unit verifies, and its exposure score stays low.
func TestSystemdAnalyze(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	b, err := os.ReadFile("systemd/notifyd.service")
	require.NoError(t, err)
	self, err := os.Executable() // verify wants an executable ExecStart
	require.NoError(t, err)
	unit := filepath.Join(t.TempDir(), "notifyd.service")
	require.NoError(t, os.WriteFile(unit, bytes.ReplaceAll(b, []byte("/usr/local/bin/notifyd"), []byte(self)), 0o644))
	out, err := exec.Command("systemd-analyze", "verify", unit).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Empty(t, strings.TrimSpace(string(out)))
	out, err = exec.Command("systemd-analyze", "security", "--offline=true", unit).CombinedOutput()
	require.NoError(t, err, string(out))
	m := regexp.MustCompile(`Overall exposure level for notifyd.service: ([0-9.]+)`).FindSubmatch(out)
	require.NotNil(t, m, string(out))
	score, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	require.LessOrEqual(t, score, 2.0, "exposure (0 safest, 10 unprotected)")
}

// TestKustomize renders the manifests with kubectl when it is installed
// (offline: no cluster needed).
func TestKustomize(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed")
	}
	out, err := exec.Command("kubectl", "kustomize", "kubernetes").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, kind := range []string{"Namespace", "ConfigMap", "Job", "Deployment", "Service"} {
		require.Contains(t, string(out), "\nkind: "+kind+"\n", kind)
	}
	require.Equal(t, 5, strings.Count(string(out), "namespace: notifyd"), "every namespaced object in notifyd")
}
