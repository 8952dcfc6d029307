// Package clitest runs a TEST FIXTURE program's main function in a child process (the test
// binary itself), so that tests can check its command line: exit codes and messages.
package clitest

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// childEnv marks the test binary started by Run: it runs main instead of the tests.
const childEnv = "CSIOP_CLITEST_RUN_MAIN"

// Main is the body of a TestMain: in a child started by Run it calls mainFunc, else it runs
// the tests.
func Main(m *testing.M, mainFunc func()) {
	if os.Getenv(childEnv) == "1" {
		mainFunc()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Command returns a command that runs the program's main with args in a child process, for
// tests that start it themselves (to signal it while it runs, for example).
func Command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

// Run starts the program's main with args and returns its exit code and combined output.
func Run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := Command(args...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("running %v: %v", args, err)
	return 0, ""
}
