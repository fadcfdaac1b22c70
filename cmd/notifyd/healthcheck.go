package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// healthcheck runs `notifyd healthcheck [URL]`: GET URL and exit 0 on a
// 2xx answer, 1 otherwise, for container HEALTHCHECKs in images that have
// no curl. Without URL it asks the readiness endpoint of this container's
// own listener: NOTIFYD_HEALTH_ADDR (a worker's probes listener) when set,
// else NOTIFYD_ADDR, else the default 127.0.0.1:8080.
func healthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var target string
	switch len(args) {
	case 0:
		target = localReadyURL(os.Getenv("NOTIFYD_HEALTH_ADDR"), os.Getenv("NOTIFYD_ADDR"))
	case 1:
		target = args[0]
	default:
		return fmt.Errorf("healthcheck takes at most one argument, the URL to GET")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", target, resp.Status)
	}
	fmt.Fprintf(stdout, "notifyd: %s answered %s\n", target, resp.Status)
	return nil
}

// localReadyURL is the /readyz URL of the first listen address given;
// a wildcard host (":8080", "0.0.0.0:8080") is asked on loopback.
func localReadyURL(addrs ...string) string {
	addr := "127.0.0.1:8080"
	for _, a := range addrs {
		if a != "" {
			addr = a
			break
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/readyz"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}
