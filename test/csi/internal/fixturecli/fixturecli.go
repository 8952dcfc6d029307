// Package fixturecli gives csi-operator's TEST FIXTURE binaries (stand-ins for the
// kubernetes-csi driver and sidecars, which cannot be built here) one command-line
// convention: the standard flag package, a --v verbosity flag, a --help text that says what
// the program is, exit status 2 for any unknown flag or stray argument, and a start log line.
package fixturecli

import (
	"flag"
	"fmt"
	"log"
	"os"
)

var (
	program   string
	verbosity int
)

// Setup names the program, registers --v on flag.CommandLine and installs the usage text.
// Call it before defining the program's own flags and before Parse.
func Setup(name, summary string) {
	program = name
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix(name + ": ")
	flag.IntVar(&verbosity, "v", 0, "log verbosity; 4 and above also logs every request and response in full")
	flag.Usage = func() {
		out := flag.CommandLine.Output()
		fmt.Fprintf(out, "%s: csi-operator TEST FIXTURE, a stand-in for the kubernetes-csi program of the same name\n", name)
		fmt.Fprintf(out, "(written from the CSI specification for csi-operator's tests; not the upstream code).\n\n%s\n\nFlags:\n", summary)
		flag.PrintDefaults()
	}
}

// Parse parses the command line (an unknown flag exits with status 2, -h with 0), rejects
// positional arguments and logs the start line.
func Parse() {
	flag.Parse()
	if flag.NArg() > 0 {
		UsageError("unexpected arguments: %q", flag.Args())
	}
	log.Printf("csi-operator TEST FIXTURE %s starting (not the upstream kubernetes-csi program); args: %q", program, os.Args[1:])
}

// UsageError reports a bad command line and exits with status 2, as flag does.
func UsageError(format string, args ...any) {
	fmt.Fprintf(flag.CommandLine.Output(), "%s: %s\n", program, fmt.Sprintf(format, args...))
	flag.Usage()
	os.Exit(2)
}

// V reports whether the --v verbosity is at least level.
func V(level int) bool {
	return verbosity >= level
}
