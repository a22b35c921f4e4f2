package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testMD = "# Mutation testing\n\n" + equivHeading + `

| where | mutation | line | why it is equivalent |
|---|---|---|---|
| ` + "`p/a.go:1`" + ` | INVERT_BITWISE ` + "`>>` → `<<`" + ` | ` + "`h := x>>3 \\| 1`" + ` | a hash |
| ` + "`p/a.go:1`" + ` | INVERT_BITWISE ` + "`\\|` → `&`" + ` | ` + "`h := x>>3 \\| 1`" + ` | also a hash |
| ` + "`p/a.go:9`" + ` | ARITHMETIC_BASE ` + "`+` → `-`" + ` | ` + "`gone := 1 + 2`" + ` | no longer in the source |

## Results

` + beginMarker + `

| package | mutants | killed | timed out | lived | not covered | not viable | kill rate | survivors explained | time | run (UTC) |
|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|
| q | 1 | 1 | 0 | 0 | 0 | 0 | 100.0% | 0/0 | 3 s | earlier |
| p | 9 | 9 | 0 | 0 | 0 | 0 | 100.0% | 0/0 | 3 s | earlier |

Unexplained survivors (kill each with a test, or explain it in the table above):

- ` + "`q/b.go:4`" + ` LIVED: CONDITIONALS_BOUNDARY ` + "`<` → `<=`" + ` in ` + "`if a < b {`" + `
- ` + "`p/a.go:2`" + ` LIVED: an old one

` + endMarker + "\ntrailer\n"

const testSrc = `package p

func f(x, y int) int {
	h := x>>3 | 1
	if y > 2 {
		return h - y
	}
	return h
}
`

const testResult = `{"files":[{"file_name":"a.go","mutations":[
{"type":"INVERT_BITWISE","status":"LIVED","line":4,"column":8},
{"type":"INVERT_BITWISE","status":"LIVED","line":4,"column":12},
{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":5,"column":7},
{"type":"CONDITIONALS_NEGATION","status":"TIMED OUT","line":5,"column":7},
{"type":"ARITHMETIC_BASE","status":"NOT COVERED","line":6,"column":12},
{"type":"CONDITIONALS_NEGATION","status":"NOT COVERED","line":9,"column":1}]}]}`

// TestReport runs the report on a package "p" with a kill, a time-out, a
// survivor explained by a row whose line number is stale, and two
// unexplained ones; the row and survivor of package "q", not run, stay.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("MUTANTS.md", testMD)
	write("p/a.go", testSrc)
	write(".mutate/p.json", testResult)
	write(".mutate/p.rerun.json", `{"p/a.go:6:12:ARITHMETIC_BASE": "KILLED"}`)
	write(".mutate/p.run.json", `{"Pkg":"p","Seconds":12.4,"Complete":true,"At":"now"}`)

	err := report([]string{"p", "r"}, "MUTANTS.md", ".mutate")
	var u unexplainedError
	if !errors.As(err, &u) || u.n != 2 {
		t.Fatalf("report: %v, want 2 unexplained", err)
	}
	b, err := os.ReadFile("MUTANTS.md")
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"| `p/a.go:4` | INVERT_BITWISE `>>` → `<<` | `h := x>>3 \\| 1` | a hash |",
		"| `p/a.go:4` | INVERT_BITWISE `\\|` → `&` | `h := x>>3 \\| 1` | also a hash |",
		"| `p/a.go:9` | ARITHMETIC_BASE", // unmatched: left as it was
		"| p | 6 | 1 | 1 | 3 | 1 | 0 | 40.0% | 66.7% | 2/4 | 1 | 12 s | now |",
		"| q | 1 | 1 | 0 | 0 | 0 | 0 | 100.0% | 0/0 | 3 s | earlier |",
		"- `p/a.go:5` LIVED: CONDITIONALS_BOUNDARY `>` → `>=` in `if y > 2 {`",
		"- `p/a.go:9` NOT COVERED: CONDITIONALS_NEGATION",
		"- `q/b.go:4` LIVED",
		"\ntrailer\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("MUTANTS.md lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "an old one") {
		t.Errorf("p's old unexplained line kept:\n%s", got)
	}
	if strings.Count(got, "| p |") != 1 {
		t.Errorf("want one row for p:\n%s", got)
	}
}

func TestOperatorAt(t *testing.T) {
	line := "\tx &^= y<<2 && z"
	for col, want := range map[int]string{3: "&^=", 8: "<<", 12: "&&", 0: "?"} {
		if got := operatorAt(line, col); got != want {
			t.Errorf("operatorAt(%q, %d) = %q, want %q", line, col, got, want)
		}
	}
}

func TestMutate(t *testing.T) {
	got, err := mutate([]byte(testSrc), 5, 7, "CONDITIONALS_NEGATION")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(testSrc, "y > 2", "y <= 2", 1); string(got) != want {
		t.Fatalf("mutated:\n%s\nwant:\n%s", got, want)
	}
	if _, err := mutate([]byte(testSrc), 5, 6, "CONDITIONALS_NEGATION"); err == nil {
		t.Fatal("mutating a column with no operator succeeded")
	}
}
