package views

import "strings"

// DiffOp says what a diff line is.
type DiffOp int

// Diff operations.
const (
	DiffSame DiffOp = iota
	DiffAdd
	DiffDel
)

// String names the operation, for CSS classes.
func (o DiffOp) String() string {
	switch o {
	case DiffAdd:
		return "add"
	case DiffDel:
		return "del"
	}
	return "same"
}

// Prefix is the operation's mark in a unified diff.
func (o DiffOp) Prefix() string {
	switch o {
	case DiffAdd:
		return "+ "
	case DiffDel:
		return "- "
	}
	return "  "
}

// DiffLine is one line of a line diff.
type DiffLine struct {
	Op   DiffOp
	Text string
}

// maxDiffCells bounds the LCS table (lines of a × lines of b); larger
// inputs are shown as all removed then all added.
const maxDiffCells = 4 << 20

// LineDiff returns a line diff that turns a into b: the longest common
// subsequence of lines kept, the rest removed or added, removals first.
func LineDiff(a, b string) []DiffLine {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	// Common prefix and suffix cost nothing.
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var out []DiffLine
	for _, l := range x[:pre] {
		out = append(out, DiffLine{DiffSame, l})
	}
	xm, ym := x[pre:len(x)-suf], y[pre:len(y)-suf]
	if len(xm)*len(ym) > maxDiffCells {
		for _, l := range xm {
			out = append(out, DiffLine{DiffDel, l})
		}
		for _, l := range ym {
			out = append(out, DiffLine{DiffAdd, l})
		}
	} else {
		out = append(out, lcsDiff(xm, ym)...)
	}
	for _, l := range x[len(x)-suf:] {
		out = append(out, DiffLine{DiffSame, l})
	}
	return out
}

func lcsDiff(x, y []string) []DiffLine {
	n, m := len(x), len(y)
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []DiffLine
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out = append(out, DiffLine{DiffSame, x[i]})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, DiffLine{DiffAdd, y[j]})
			j++
		default:
			out = append(out, DiffLine{DiffDel, x[i]})
			i++
		}
	}
	return out
}

// DiffCounts returns how many lines a diff adds and removes.
func DiffCounts(d []DiffLine) (added, removed int) {
	for _, l := range d {
		switch l.Op {
		case DiffAdd:
			added++
		case DiffDel:
			removed++
		}
	}
	return added, removed
}
