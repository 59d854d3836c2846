package envelope

import (
	"encoding/json"
	"testing"
)

// FuzzParse checks the parser against encoding/json: the same texts are
// valid, and strings decode to the same values.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\ud83d\ude00 x"`, `"\ud83d x"`, `"\ud83d\u0041"`, "\"\xff\xfe ok\"",
		`{"a":[1,-0.5e+3,true,null,{}]}`, `"\u00e9\"\\\/\b\f\r\t"`, `01`, `[1,]`, `{"a" 1}`, `"\x"`, `-`, `1.`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := parse(data)
		if (err == nil) != json.Valid(data) {
			t.Fatalf("parse(%q) err=%v, json.Valid=%v", data, err, json.Valid(data))
		}
		if err != nil || tr.root.kind != '"' {
			return
		}
		var want string
		json.Unmarshal(data, &want)
		if got := tr.str(&tr.root); got != want {
			t.Fatalf("str(%q) = %q, want %q", data, got, want)
		}
	})
}
