package chaosrun

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// proc is one notifyd child process. Its output is kept for the report
// and read only once it has exited (out has no lock of its own).
type proc struct {
	name string
	url  string // where /readyz and /metrics answer
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	// killed: the run killed it (any other exit is a death of its own).
	killed bool
}

// startProc runs bin with args and env and waits until url/readyz
// answers 200 (30 s at most).
func startProc(bin string, env []string, name, url string, args ...string) (*proc, error) {
	p := &proc{name: name, url: url, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = env, &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-p.done:
			return p, fmt.Errorf("%s exited before it was ready:\n%s", name, p.out.String())
		default:
		}
		if r, err := http.Get(url + "/readyz"); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.kill()
			return p, fmt.Errorf("%s not ready in 30 s:\n%s", name, p.out.String())
		}
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.killed = true
	_ = p.cmd.Process.Kill()
	<-p.done
}

// died tells whether the process exited without being killed.
func (p *proc) died() bool {
	select {
	case <-p.done:
		return !p.killed
	default:
		return false
	}
}

// counter reads one sample of the process's /metrics (0 when absent).
func (p *proc) counter(sample string) (int, error) {
	r, err := http.Get(p.url + "/metrics")
	if err != nil {
		return 0, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
