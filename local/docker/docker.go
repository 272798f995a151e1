// Package docker runs the docker CLI for make sam-invoke and the test that
// runs the function's container: user-defined networks, images, containers.
package docker

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Run runs docker with args and returns its standard output, trimmed; its
// standard error is in the error.
func Run(ctx context.Context, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Network returns the gateway of the user-defined bridge network name,
// creating it first if it does not exist.
func Network(ctx context.Context, name string) (gateway string, err error) {
	if _, err := Run(ctx, "network", "inspect", name); err != nil {
		if _, err := Run(ctx, "network", "create", "--driver", "bridge", name); err != nil {
			return "", err
		}
	}
	gw, err := Run(ctx, "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Gateway}}{{end}}", name)
	if err != nil {
		return "", err
	}
	if gw == "" {
		return "", fmt.Errorf("docker network %s has no gateway", name)
	}
	return gw, nil
}

// HasImage reports whether an image matching reference (a docker images
// reference filter, which may hold wildcards) is present locally, so that
// nothing need be pulled.
func HasImage(ctx context.Context, reference string) bool {
	out, err := Run(ctx, "images", "-q", "--filter", "reference="+reference)
	return err == nil && out != ""
}
