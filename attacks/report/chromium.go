package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The page's tests, and the step that regenerates docs/report-card.png,
// render the page in a real headless Chromium: what a reader's browser
// builds from it is what they check.

// FindChromium is the path of a Chromium to render the page with.
func FindChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("chromium is not installed (apt-get install chromium; .ci/run installs it)")
}

// Render opens the page at path in a headless browser with a window of
// width by height pixels, saves a screenshot of it to shot and returns the
// DOM the browser built. One start of the browser does both.
func Render(ctx context.Context, browser, path, shot string, width, height int) (string, error) {
	profile, err := os.MkdirTemp("", "countwall-chromium-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(profile)
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + profile, "--dump-dom", "--screenshot=" + shot,
		fmt.Sprintf("--window-size=%d,%d", width, height), "file://" + abs}
	cmd := exec.CommandContext(ctx, browser, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("rendering %s in %s: %w\n%s", path, browser, err, stderr.String())
	}
	return string(out), nil
}
