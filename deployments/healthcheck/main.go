// Command formward-healthcheck is the container image's health probe: the runtime image has no
// shell or curl, so compose healthchecks run this instead. It GETs one URL on the same
// container and exits 0 on a 2xx answer within the timeout, 1 otherwise.
//
//	formward-healthcheck http://127.0.0.1:8080/readyz
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: formward-healthcheck URL")
		os.Exit(2)
	}
	if err := check(os.Args[1], 3*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "formward-healthcheck:", err)
		os.Exit(1)
	}
}

func check(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("get %s: status %d", url, res.StatusCode)
	}
	return nil
}
