package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const (
	beginMarker = "<!-- mutate:begin (written by `make mutate`; edit the equivalents table, not this) -->"
	endMarker   = "<!-- mutate:end -->"
	// equivHeading starts the hand-written table of equivalent mutants.
	equivHeading = "## Equivalent mutants"
)

// The statuses gremlins writes.
const (
	killed     = "KILLED"
	lived      = "LIVED"
	timedOut   = "TIMED OUT"
	notCovered = "NOT COVERED"
	notViable  = "NOT VIABLE"
)

// mutant is one mutation of a source line.
type mutant struct {
	File     string // relative to the module root
	Line     int
	Type     string
	From, To string // the operator and what gremlins replaced it with
	Code     string // the source line, trimmed
	Status   string
	Rerun    bool // gremlins called it not covered or timed out; mutate ran it again
}

// key identifies a mutant across edits that move its line.
func (m mutant) key() string {
	return strings.Join([]string{m.File, m.Type, m.From, m.Code}, "\x00")
}

// equiv is a row of the hand-written equivalents table.
type equiv struct {
	row          int // index of its line in the file
	mutant       mutant
	why          string
	matched      bool
	matchedLines []int
}

// unexplainedError reports survivors that no equivalents row explains.
type unexplainedError struct{ n int }

func (e unexplainedError) Error() string {
	return fmt.Sprintf("%d surviving mutants are neither killed nor explained in the equivalents table", e.n)
}

// report rewrites md's generated section and the line numbers of its
// equivalents table from the results in work.
func report(pkgs []string, md, work string) error {
	b, err := os.ReadFile(md)
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	begin, end := slices.Index(lines, beginMarker), slices.Index(lines, endMarker)
	if begin < 0 || end < begin {
		return fmt.Errorf("%s: no %q ... %q section", md, beginMarker, endMarker)
	}
	equivs, err := parseEquivs(lines[:begin])
	if err != nil {
		return fmt.Errorf("%s: %w", md, err)
	}
	oldRows, oldUnexplained := parseGenerated(lines[begin+1 : end])

	rows := map[string]string{}
	for k, v := range oldRows {
		rows[k] = v
	}
	unexplainedLines := map[string][]string{}
	for k, v := range oldUnexplained {
		unexplainedLines[k] = v
	}
	unexplained := 0
	for _, pkg := range pkgs {
		res, info, ok, err := loadResult(pkg, work)
		if err != nil {
			return fmt.Errorf("%s: %w", pkg, err)
		}
		if !ok {
			continue
		}
		mutants, err := readMutants(pkg, res)
		if err != nil {
			return err
		}
		var c counts
		var un []string
		for _, m := range mutants {
			c.add(m.Status)
			if m.Rerun {
				c.rerun++
			}
			if m.Status != lived && m.Status != notCovered {
				continue
			}
			e := findEquiv(equivs, m)
			if e == nil {
				un = append(un, fmt.Sprintf("- `%s:%d` %s: %s `%s` → `%s` in `%s`",
					m.File, m.Line, m.Status, m.Type, m.From, m.To, m.Code))
				fmt.Fprintf(os.Stderr, "mutate: unexplained %s; kill it with a test, or add to the equivalents table:\n%s\n",
					m.Status, equivRow(m, "why it is equivalent"))
				continue
			}
			c.explained++
			e.matched = true
			e.matchedLines = append(e.matchedLines, m.Line)
		}
		unexplained += len(un)
		rows[pkg] = c.row(pkg, info)
		unexplainedLines[pkg] = un
		for _, e := range equivs {
			if pkgOf(e.mutant.File) == pkg && !e.matched {
				fmt.Fprintf(os.Stderr, "mutate: equivalents row for %s:%d (%s %s) matches no survivor any more: remove it\n",
					e.mutant.File, e.mutant.Line, e.mutant.Type, e.mutant.Code)
			}
		}
	}

	// Line numbers of the matched equivalents, as the source has them now.
	for _, e := range equivs {
		if len(e.matchedLines) == 0 {
			continue
		}
		slices.Sort(e.matchedLines)
		nums := make([]string, 0, len(e.matchedLines))
		for _, l := range slices.Compact(e.matchedLines) {
			nums = append(nums, fmt.Sprint(l))
		}
		cells := splitRow(lines[e.row])
		cells[0] = fmt.Sprintf(" `%s:%s` ", e.mutant.File, strings.Join(nums, ","))
		lines[e.row] = "|" + strings.Join(cells, "|") + "|"
	}

	gen := []string{beginMarker, "",
		"| package | mutants | killed | timed out | lived | not covered | not viable | kill rate | of non-equivalent | survivors explained | run by mutate | time | run (UTC) |",
		"|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"}
	for _, pkg := range sortedKeys(rows) {
		gen = append(gen, rows[pkg])
	}
	gen = append(gen, "")
	var un []string
	for _, pkg := range sortedKeys(unexplainedLines) {
		un = append(un, unexplainedLines[pkg]...)
	}
	if len(un) == 0 {
		gen = append(gen, "Unexplained survivors: none.")
	} else {
		gen = append(gen, "Unexplained survivors (kill each with a test, or explain it in the table above):", "")
		gen = append(gen, un...)
	}
	gen = append(gen, "", endMarker)
	out := slices.Concat(lines[:begin], gen, lines[end+1:])
	if err := os.WriteFile(md, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		return err
	}
	if unexplained > 0 {
		return unexplainedError{unexplained}
	}
	return nil
}

// counts are a package's mutants by status.
type counts struct {
	killed, timedOut, lived, notCovered, notViable, explained, rerun int
}

func (c *counts) add(status string) {
	switch status {
	case killed:
		c.killed++
	case timedOut:
		c.timedOut++
	case lived:
		c.lived++
	case notCovered:
		c.notCovered++
	case notViable:
		c.notViable++
	}
}

// row is the package's line of the table. The kill rate counts a mutant
// whose tests hung (timed out) as killed: the tests did not pass.
func (c counts) row(pkg string, info runInfo) string {
	total := c.killed + c.timedOut + c.lived + c.notCovered + c.notViable
	percent := func(part, whole int) string {
		if whole == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
	}
	tested := c.killed + c.timedOut + c.lived
	rate := percent(c.killed+c.timedOut, tested)
	// Explained survivors of a complete run are all lived ones.
	rateNonEquiv := percent(c.killed+c.timedOut, tested-min(c.explained, c.lived))
	t := fmt.Sprintf("%.0f s", info.Seconds)
	if !info.Complete {
		t += " (incomplete: " + info.Error + ")"
	}
	if len(info.Remaining) > 0 {
		t += " (incomplete: files not run: " + strings.Join(info.Remaining, " ") + ")"
	}
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d | %s | %s | %d/%d | %d | %s | %s |",
		pkg, total, c.killed, c.timedOut, c.lived, c.notCovered, c.notViable, rate, rateNonEquiv,
		c.explained, c.lived+c.notCovered, c.rerun, t, info.At)
}

// parseGenerated returns the table rows and the unexplained-survivor lines
// of the previous generated section, by package, so that packages not run
// this time keep theirs.
func parseGenerated(lines []string) (rows map[string]string, unexplained map[string][]string) {
	rows, unexplained = map[string]string{}, map[string][]string{}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| package "):
			cells := splitRow(l)
			rows[strings.TrimSpace(cells[0])] = l
		case strings.HasPrefix(l, "- `"):
			file, _, _ := strings.Cut(strings.TrimPrefix(l, "- `"), ":")
			unexplained[pkgOf(file)] = append(unexplained[pkgOf(file)], l)
		}
	}
	return rows, unexplained
}

// parseEquivs reads the equivalents table: rows of
//
//	| `file.go:line` | TYPE `from` → `to` | `source line` | why |
//
// after the equivalents heading.
func parseEquivs(lines []string) ([]*equiv, error) {
	start := slices.Index(lines, equivHeading)
	if start < 0 {
		return nil, fmt.Errorf("no %q heading", equivHeading)
	}
	var es []*equiv
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := splitRow(l)
		if len(cells) < 4 {
			return nil, fmt.Errorf("line %d: want 4 cells: %s", i+1, l)
		}
		loc := unquote(cells[0])
		file, line, _ := strings.Cut(loc, ":")
		var m mutant
		m.File = file
		first, _, _ := strings.Cut(line, ",")
		fmt.Sscan(first, &m.Line)
		mut := strings.Fields(strings.TrimSpace(cells[1]))
		if len(mut) < 2 {
			return nil, fmt.Errorf("line %d: mutation cell %q: want TYPE `from` → `to`", i+1, cells[1])
		}
		m.Type, m.From = mut[0], unquote(mut[1])
		m.Code = unquote(cells[2])
		es = append(es, &equiv{row: i, mutant: m, why: strings.TrimSpace(cells[3])})
	}
	return es, nil
}

func findEquiv(es []*equiv, m mutant) *equiv {
	for _, e := range es {
		if e.mutant.key() == m.key() {
			return e
		}
	}
	return nil
}

// equivRow formats m as a row of the equivalents table.
func equivRow(m mutant, why string) string {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	return fmt.Sprintf("| `%s:%d` | %s `%s` → `%s` | `%s` | %s (%s) |",
		m.File, m.Line, m.Type, esc(m.From), esc(m.To), esc(m.Code), why, m.Status)
}

// splitRow splits a markdown table row into its cells, honouring \|.
func splitRow(l string) []string {
	l = strings.TrimSpace(l)
	l = strings.TrimPrefix(strings.TrimSuffix(l, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l) && l[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case l[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(l[i])
		}
	}
	return append(cells, cur.String())
}

// unquote returns a cell's text without its backquotes and escapes.
func unquote(cell string) string {
	s := strings.TrimSpace(cell)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "`"), "`")
	return strings.ReplaceAll(s, `\|`, "|")
}

// pkgOf returns the package directory of a module-relative file.
func pkgOf(file string) string { return filepath.ToSlash(filepath.Dir(file)) }

// readMutants turns gremlins' results for pkg into mutants with their
// source lines, in file and line order.
func readMutants(pkg string, res gremlinsResult) ([]mutant, error) {
	var ms []mutant
	for _, f := range res.Files {
		file := filepath.ToSlash(filepath.Join(pkg, f.Filename))
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		srcLines := strings.Split(string(src), "\n")
		for _, g := range f.Mutations {
			m := mutant{File: file, Line: g.Line, Type: g.Type, Status: g.Status, Rerun: g.rerun}
			if g.Line < 1 || g.Line > len(srcLines) {
				return nil, fmt.Errorf("%s:%d: no such line (results older than the source?)", file, g.Line)
			}
			line := srcLines[g.Line-1]
			m.Code = strings.TrimSpace(line)
			m.From = operatorAt(line, g.Column-1)
			m.To = mutation(g.Type, m.From)
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(a, b mutant) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return ms, nil
}

// operators gremlins mutates, longest first.
var operators = []string{
	"&^=", "<<=", ">>=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "&^",
	"==", "!=", "<=", ">=", "&&", "||", "++", "--",
	"+", "-", "*", "/", "%", "&", "|", "^", "<", ">",
	"break", "continue",
}

// operatorAt returns the operator at byte offset col of line.
func operatorAt(line string, col int) string {
	if col < 0 || col > len(line) {
		return "?"
	}
	for _, op := range operators {
		if strings.HasPrefix(line[col:], op) {
			return op
		}
	}
	return "?"
}

// mutation returns what gremlins v0.6.0 replaces op with for a mutant type
// (its internal/engine/mappings.go).
func mutation(typ, op string) string {
	m := map[string]map[string]string{
		"ARITHMETIC_BASE":       {"+": "-", "*": "/", "/": "*", "%": "*", "-": "+"},
		"CONDITIONALS_BOUNDARY": {">=": ">", ">": ">=", "<=": "<", "<": "<="},
		"CONDITIONALS_NEGATION": {"==": "!=", ">=": "<", ">": "<=", "<=": ">", "<": ">=", "!=": "=="},
		"INCREMENT_DECREMENT":   {"--": "++", "++": "--"},
		"INVERT_ASSIGNMENTS":    {"+=": "-=", "*=": "/=", "/=": "*=", "%=": "%=", "-=": "+="},
		"INVERT_BITWISE":        {"&": "|", "|": "&", "^": "&", "&^": "&", "<<": ">>", ">>": "<<"},
		"INVERT_BWASSIGN":       {"&=": "|=", "|=": "&=", "^=": "&=", "&^=": "&=", "<<=": ">>=", ">>=": "<<="},
		"INVERT_LOGICAL":        {"&&": "||", "||": "&&"},
		"INVERT_LOOPCTRL":       {"break": "continue", "continue": "break"},
		"INVERT_NEGATIVES":      {"-": "+"},
		"REMOVE_SELF_ASSIGNMENTS": {"+=": "=", "&=": "=", "&^=": "=", "*=": "=", "|=": "=", "/=": "=",
			"%=": "=", "<<=": "=", ">>=": "=", "-=": "=", "^=": "="},
	}
	if to, ok := m[typ][op]; ok {
		return to
	}
	return "?"
}
