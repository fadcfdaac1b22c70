package render

import (
	"html"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// unbounded is a limit no test output reaches.
const unbounded = 1 << 30

func sub(s string, vars map[string]string) string {
	out, ok := Substitute(s, vars, unbounded)
	if !ok {
		panic("over an unbounded limit")
	}
	return out
}

func subU(s string, vars map[string]string) string {
	out, ok := SubstituteUnicode(s, vars, unbounded)
	if !ok {
		panic("over an unbounded limit")
	}
	return out
}

func TestSubstitute(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"name":    "Kim",
		"code":    "123456",
		"a_1":     "x",
		"_":       "underscore",
		"inject":  "{{code}}",
		"empty":   "",
		"이름":      "홍길동",
		"Name":    "upper",
		"brand42": "ACME",
	}
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"no placeholder", "hello world", "hello world"},
		{"empty", "", ""},
		{"simple", "Hi {{name}}!", "Hi Kim!"},
		{"several", "{{name}}: {{code}} ({{brand42}})", "Kim: 123456 (ACME)"},
		{"adjacent", "{{name}}{{code}}", "Kim123456"},
		{"spaces inside", "Hi {{ name }}, {{  code}} {{code  }}", "Hi Kim, 123456 123456"},
		{"tab inside", "{{\tname\t}}", "Kim"},
		{"case sensitive", "{{Name}} {{name}} {{NAME}}", "upper Kim "},
		{"digits and underscore", "{{a_1}} {{_}}", "x underscore"},
		{"unknown is empty", "[{{missing}}]", "[]"},
		{"empty value", "[{{empty}}]", "[]"},
		{"whole string", "{{code}}", "123456"},
		{"value not rescanned", "{{inject}}", "{{code}}"},
		{"hyphen not a name", "{{first-name}}", "{{first-name}}"},
		{"dot not a name", "{{user.name}}", "{{user.name}}"},
		{"space in name", "{{first name}}", "{{first name}}"},
		{"empty braces", "{{}} {{ }}", "{{}} {{ }}"},
		{"unclosed", "Hi {{name", "Hi {{name"},
		{"unclosed then valid", "{{name {{code}}", "{{name 123456"},
		{"single close", "{{name}", "{{name}"},
		{"single braces", "{name}", "{name}"},
		{"triple braces", "{{{name}}}", "{Kim}"},
		{"quadruple open", "{{{{name}}", "{{Kim"},
		{"newline inside", "{{\nname}}", "{{\nname}}"},
		{"lone open at end", "abc{{", "abc{{"},
		{"lone brace at end", "abc{", "abc{"},
		{"non-ASCII name not allowed", "{{이름}}", "{{이름}}"},
		{"non-ASCII around", "안녕 {{name}}님", "안녕 Kim님"},
		{"html untouched", "<b>{{name}}</b>", "<b>Kim</b>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, sub(tc.in, vars))
		})
	}
	require.Equal(t, "a  b", sub("a {{x}} b", nil), "nil map")
}

func TestSubstituteUnicode(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"이름":     "홍길동",
		"name":   "Kim",
		"prénom": "Zoé",
		"नाम":    "Asha", // contains a combining vowel sign (Mc)
		"имя_2":  "Ivan",
		"٣":      "arabic-indic digit",
	}
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"korean", "{{이름}}님 안녕하세요", "홍길동님 안녕하세요"},
		{"ascii still works", "{{ name }}", "Kim"},
		{"accented", "Bonjour {{prénom}}", "Bonjour Zoé"},
		{"devanagari with marks", "{{नाम}}", "Asha"},
		{"cyrillic with digit", "{{имя_2}}", "Ivan"},
		{"unicode digit", "{{٣}}", "arabic-indic digit"},
		{"unknown unicode empty", "[{{없음}}]", "[]"},
		{"symbol not a name", "{{이름!}}", "{{이름!}}"},
		{"emoji not a name", "{{😀}}", "{{😀}}"},
		{"invalid utf-8 left", "{{\xff}}", "{{\xff}}"},
		{"ideographic space not blank", "{{\u3000이름}}", "{{\u3000이름}}"},
		{"no placeholder", "평문", "평문"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, subU(tc.in, vars))
		})
	}
}

// The allocation tests are not parallel: testing.AllocsPerRun counts every
// goroutine's allocations.
func TestSubstituteNoAllocWithoutPlaceholder(t *testing.T) {
	s := strings.Repeat("plain text ", 100)
	allocs := testing.AllocsPerRun(100, func() { _ = sub(s, nil) })
	require.Zero(t, allocs)
}

func TestSubstituteOneAlloc(t *testing.T) {
	vars := map[string]string{"name": "Kim", "code": "123456"}
	s := "Hello {{name}}, your code is {{ code }}. {{missing}} end."
	allocs := testing.AllocsPerRun(100, func() { _ = sub(s, vars) })
	require.LessOrEqual(t, allocs, 1.0)
}

func TestHTMLEscapeVars(t *testing.T) {
	t.Parallel()
	in := map[string]string{
		"name":  `<script>alert("x")</script>`,
		"amp":   "Tom & Jerry",
		"quote": `it's`,
		"plain": "홍길동",
	}
	got := HTMLEscapeVars(in)
	require.Equal(t, map[string]string{
		"name":  "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",
		"amp":   "Tom &amp; Jerry",
		"quote": "it&#39;s",
		"plain": "홍길동",
	}, got)
	require.Equal(t, `<script>alert("x")</script>`, in["name"], "input unchanged")
	require.Equal(t, "<p>&lt;b&gt;</p>", sub("<p>{{v}}</p>", HTMLEscapeVars(map[string]string{"v": "<b>"})))
	require.NotNil(t, HTMLEscapeVars(nil))
	require.Empty(t, HTMLEscapeVars(nil))
}

var benchSink string

func BenchmarkSubstitute(b *testing.B) {
	tmpl := "안녕하세요 {{name}}님, {{brand}}입니다. 이번 달 혜택: {{ offer }}. " +
		"수신을 원하지 않으시면 {{unsubscribe_url}} 에서 해지하세요. {{missing}}" +
		strings.Repeat(" 본문 텍스트", 20)
	vars := map[string]string{
		"name": "홍길동", "brand": "ACME", "offer": "10% 할인",
		"unsubscribe_url": "https://example.com/u/abcdef0123456789",
	}
	b.Run("ascii", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSink = sub(tmpl, vars)
		}
	})
	b.Run("unicode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSink = subU(tmpl, vars)
		}
	})
	b.Run("no-placeholder", func(b *testing.B) {
		plain := strings.Repeat("plain text ", 50)
		b.ReportAllocs()
		for b.Loop() {
			benchSink = sub(plain, vars)
		}
	})
}

func TestNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"no placeholder", nil},
		{"Hi {{name}}, {{ code }} and {{name}} again", []string{"name", "code"}},
		{"{{{x}}} {{first-name}} {{}} {{이름}} {{y", []string{"x"}},
		{"{{a}}{{b}}{{a}}", []string{"a", "b"}},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Names(tc.in), tc.in)
		// Names finds exactly what Substitute replaces: with every name
		// mapped to a marker, nothing of the input's placeholders is left.
		vars := map[string]string{}
		for _, n := range Names(tc.in) {
			vars[n] = "\x00"
		}
		out := sub(tc.in, vars)
		require.Equal(t, sub(tc.in, nil), strings.ReplaceAll(out, "\x00", ""), tc.in)
		require.Empty(t, Names(out), tc.in)
	}
	require.Equal(t, []string{"이름", "x"}, NamesUnicode("{{이름}}님 {{ x }} {{이름}} {{first-name}}"))
}

func TestSlot(t *testing.T) {
	t.Parallel()
	before, after, n := Slot("<h1>{{brand}}</h1>{{ content }}<p>bye</p>", "content")
	require.Equal(t, 1, n)
	require.Equal(t, "<h1>{{brand}}</h1>", before)
	require.Equal(t, "<p>bye</p>", after)
	for in, want := range map[string]int{"no slot": 0, "{{content}}{{content}}": 2, "{{contents}}": 0, "{{ content}} x": 1, "{{{content}}}": 1} {
		b, a, n := Slot(in, "content")
		require.Equal(t, want, n, in)
		if n != 1 {
			require.Empty(t, b+a, in)
		}
	}
}

func TestSubstituteLimit(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"a": "abc", "k": "가나", "bad": "\xff\xfe"}
	tests := []struct {
		name  string
		in    string
		limit int
		want  string // "" with ok false when over
		ok    bool
	}{
		{"exactly the limit", "x{{a}}y", 5, "xabcy", true},
		{"one over", "x{{a}}y", 4, "", false},
		{"characters, not bytes", "{{k}}{{k}}", 4, "가나가나", true},
		{"characters over", "{{k}}{{k}}!", 4, "", false},
		{"a byte that is not UTF-8 is a character", "{{bad}}", 2, "\xff\xfe", true},
		{"not UTF-8 over", "{{bad}}.", 2, "", false},
		{"no placeholder fits", "가나다", 3, "가나다", true},
		{"no placeholder over", "가나다라", 3, "", false},
		{"zero limit empty output", "{{missing}}", 0, "", true},
		{"zero limit", "{{a}}", 0, "", false},
		{"kept braces count", "{{x-y}}", 7, "{{x-y}}", true},
		{"kept braces over", "{{x-y}}", 6, "", false},
	}
	for _, tc := range tests {
		for _, fn := range []func(string, map[string]string, int) (string, bool){Substitute, SubstituteUnicode} {
			out, ok := fn(tc.in, vars, tc.limit)
			require.Equal(t, tc.ok, ok, tc.name)
			require.Equal(t, tc.want, out, tc.name)
		}
	}
}

func TestFill(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"brand": "ACME", "content": "not the body"}
	out, ok := Fill("<h1>{{brand}}</h1>{{ content }}<p>{{brand}}</p>", "content", "body {{brand}}", vars, 100)
	require.True(t, ok)
	require.Equal(t, "<h1>ACME</h1>body {{brand}}<p>ACME</p>", out, "the body is not scanned; vars[slot] is not used")
	out, ok = Fill("[{{content}}]", "content", "가나", nil, 4)
	require.True(t, ok)
	require.Equal(t, "[가나]", out)
	_, ok = Fill("[{{content}}]", "content", "가나", nil, 3)
	require.False(t, ok, "the body counts toward the limit")
}

// issue 29's attack: "{{a}}" 100,000 times with a 500 KB value asked for
// 50 GB. Over the limit nothing is allocated, and the passes stop early.
func TestSubstituteOverflowAllocatesNothing(t *testing.T) {
	s := strings.Repeat("{{a}}", 100_000)
	vars := map[string]string{"a": strings.Repeat("x", 500_000)}
	for _, limit := range []int{100_000, 500_000} {
		allocs := testing.AllocsPerRun(10, func() {
			if _, ok := Substitute(s, vars, limit); ok {
				panic("fits")
			}
		})
		require.Zero(t, allocs)
	}
	// Values that fit in bytes only when counted as characters: the
	// character count stops past the limit too.
	vars = map[string]string{"a": strings.Repeat("가", 10)} // 30 bytes, 10 characters
	out, ok := Substitute(s[:5*1000], vars, 10_000)
	require.True(t, ok)
	require.Equal(t, 10_000, utf8.RuneCountInString(out))
	_, ok = Substitute(s[:5*1001], vars, 10_000)
	require.False(t, ok)
}

// A fitting output is allocated once, at its size.
func TestSubstituteAllocatesTheOutputOnly(t *testing.T) {
	s := strings.Repeat("{{a}}", 1000)
	vars := map[string]string{"a": strings.Repeat("x", 100)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, ok := Substitute(s, vars, 1_000_000)
	runtime.ReadMemStats(&after)
	require.True(t, ok)
	require.Len(t, out, 100_000)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(100_000+16<<10))
}

// naive is the substitution as it was before issue 29 (no limit), the
// oracle of FuzzSubstitute.
func naive(s string, vars map[string]string, unicodeNames bool) string {
	var b strings.Builder
	start := 0
	for i := strings.Index(s, "{{"); i >= 0; {
		next := i + 1
		if name, end, ok := placeholder(s, i+2, unicodeNames); ok {
			b.WriteString(s[start:i])
			b.WriteString(vars[name])
			start, next = end, end
		}
		j := strings.Index(s[next:], "{{")
		if j < 0 {
			break
		}
		i = next + j
	}
	b.WriteString(s[start:])
	return b.String()
}

// FuzzSubstitute feeds adversarial templates and values (each repeated,
// so a small input can ask for gigabytes) and checks that the output
// never exceeds the limit, that the heap allocated by one call stays
// within the output's size (plus a little for the runtime), and, when the
// unbounded output is small enough to build, that the result is that
// output exactly when it fits.
func FuzzSubstitute(f *testing.F) {
	f.Add("Hi {{a}}, {{ b }}!", "Kim", uint16(1), uint16(1), uint32(100))
	f.Add("{{a}}", "x", uint16(65535), uint16(65535), uint32(100_000))    // issue 29, the send
	f.Add("{{b}}", `"`, uint16(60000), uint16(2000), uint32(500_000))     // issue 29, the campaign HTML
	f.Add("{{이름}}{{{a}}}", "가\xff", uint16(3000), uint16(300), uint32(7)) // Unicode names, multibyte, not UTF-8
	f.Add("{{a}", "{{a}}", uint16(10), uint16(10), uint32(0))
	f.Fuzz(func(t *testing.T, tmpl, val string, tmplReps, valReps uint16, limit uint32) {
		s := strings.Repeat(tmpl, 1+int(tmplReps)%20_000)
		v := strings.Repeat(val, 1+int(valReps)%2_000)
		if len(s) > 4<<20 || len(v) > 4<<20 {
			t.Skip("inputs beyond the request body limit")
		}
		lim := int(limit % 2_000_000)
		vars := map[string]string{"a": v, "b": html.EscapeString(v), "이름": v}
		for _, unicodeNames := range []bool{false, true} {
			fn := Substitute
			if unicodeNames {
				fn = SubstituteUnicode
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, ok := fn(s, vars, lim)
			runtime.ReadMemStats(&after)
			n := utf8.RuneCountInString(out)
			if n > lim {
				t.Fatalf("output of %d characters over the limit %d", n, lim)
			}
			if !ok && out != "" {
				t.Fatalf("output given with ok false")
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > uint64(len(out))+64<<10 {
				t.Fatalf("allocated %d bytes for an output of %d", a, len(out))
			}
			// The unbounded output's size, to build the oracle only when
			// it is small.
			if upper := len(s) + strings.Count(s, "{{")*len(vars["b"]); upper <= 8<<20 {
				want := naive(s, vars, unicodeNames)
				fitsLimit := utf8.RuneCountInString(want) <= lim
				if ok != fitsLimit || (ok && out != want) {
					t.Fatalf("ok %v, want fits %v; output differs: %v", ok, fitsLimit, out != want)
				}
			}
		}
	})
}
