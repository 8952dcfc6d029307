// Command junit-summary summarizes the JUnit report of Kubernetes' e2e.test (written with
// --report-dir) for test/conformance: of the specs whose full name matches --focus, how many
// passed, failed, were skipped by the suite itself (e.g. a capability the test driver does not
// have), were skipped by us (their name matches --skip) and were not run (skipped without a
// reason: an interrupted run), by test pattern (the "[Testpattern: ...]" part of a storage
// test's name), as a Markdown table; then the failed specs by name. Specs outside --focus (the rest of e2e.test) are only counted.
//
//	junit-summary --focus REGEX [--skip REGEX] [-o FILE] junit_01.xml
//
// Exits 0 whatever the results (the caller reads the failure count from the table or from
// e2e.test's own exit status); 2 on a bad argument or an unreadable report.
package main

import (
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

type testCase struct {
	Name    string  `xml:"name,attr"`
	Status  string  `xml:"status,attr"`
	Time    float64 `xml:"time,attr"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	Failure *struct{} `xml:"failure"`
	Error   *struct{} `xml:"error"`
}

type report struct {
	Suites []struct {
		Cases []testCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type counts struct{ passed, failed, suiteSkipped, ourSkipped, notRun int }

func (c *counts) add(o counts) {
	c.passed += o.passed
	c.failed += o.failed
	c.suiteSkipped += o.suiteSkipped
	c.ourSkipped += o.ourSkipped
	c.notRun += o.notRun
}

var patternRE = regexp.MustCompile(`\[Testpattern: ([^\]]*)\]`)

func main() {
	focus := flag.String("focus", "", "regular expression: the specs to summarize (as --ginkgo.focus)")
	skip := flag.String("skip", "", "regular expression: the specs skipped by us (as --ginkgo.skip)")
	out := flag.String("o", "", "also write the summary to this file")
	flag.Parse()
	if flag.NArg() != 1 || *focus == "" {
		fmt.Fprintln(os.Stderr, "usage: junit-summary --focus REGEX [--skip REGEX] [-o FILE] junit_01.xml")
		os.Exit(2)
	}
	focusRE, err := regexp.Compile(*focus)
	if err != nil {
		fail("--focus: %v", err)
	}
	var skipRE *regexp.Regexp
	if *skip != "" {
		if skipRE, err = regexp.Compile(*skip); err != nil {
			fail("--skip: %v", err)
		}
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fail("%v", err)
	}
	var r report
	if err := xml.Unmarshal(data, &r); err != nil {
		fail("%s: %v", flag.Arg(0), err)
	}

	byPattern := map[string]*counts{}
	var failed []string
	var total counts
	outside, seconds := 0, 0.0
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			name := strings.TrimSpace(strings.TrimPrefix(c.Name, "[It] "))
			if !focusRE.MatchString(name) {
				outside++
				continue
			}
			seconds += c.Time
			pattern := "(none)"
			if m := patternRE.FindStringSubmatch(name); m != nil {
				pattern = strings.TrimSpace(m[1])
			}
			var one counts
			switch {
			case c.Failure != nil || c.Error != nil || c.Status == "failed" || c.Status == "panicked" ||
				c.Status == "timedout" || c.Status == "interrupted" || c.Status == "aborted":
				one.failed = 1
				failed = append(failed, name)
			case c.Skipped != nil || c.Status == "skipped" || c.Status == "pending":
				switch {
				case skipRE != nil && skipRE.MatchString(name):
					one.ourSkipped = 1
				case c.Skipped != nil && strings.HasPrefix(c.Skipped.Message, "skipped - "):
					// The suite said why (a capability, an fsType, a second node...).
					one.suiteSkipped = 1
				default:
					// Skipped without a reason: never started (the run was interrupted).
					one.notRun = 1
				}
			default:
				one.passed = 1
			}
			if byPattern[pattern] == nil {
				byPattern[pattern] = &counts{}
			}
			byPattern[pattern].add(one)
			total.add(one)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "| test pattern | passed | failed | skipped by the suite | skipped by us | not run |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|\n")
	patterns := make([]string, 0, len(byPattern))
	for p := range byPattern {
		patterns = append(patterns, p)
	}
	sort.Strings(patterns)
	for _, p := range patterns {
		c := byPattern[p]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", p, c.passed, c.failed, c.suiteSkipped, c.ourSkipped,
			c.notRun)
	}
	fmt.Fprintf(&b, "| **total** | **%d** | **%d** | **%d** | **%d** | **%d** |\n", total.passed, total.failed,
		total.suiteSkipped, total.ourSkipped, total.notRun)
	fmt.Fprintf(&b, "\n%d specs matched the focus (%.0f s in specs); %d other specs of e2e.test were not selected.\n",
		total.passed+total.failed+total.suiteSkipped+total.ourSkipped+total.notRun, seconds, outside)
	if len(failed) > 0 {
		fmt.Fprintf(&b, "\nFailed:\n")
		for _, f := range failed {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}

	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fail("%v", err)
		}
		defer f.Close()
		w = io.MultiWriter(os.Stdout, f)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "junit-summary: "+format+"\n", args...)
	os.Exit(2)
}
