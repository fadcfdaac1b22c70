package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
			require.Equal(t, tc.want, Substitute(tc.in, vars))
		})
	}
	require.Equal(t, "a  b", Substitute("a {{x}} b", nil), "nil map")
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
			require.Equal(t, tc.want, SubstituteUnicode(tc.in, vars))
		})
	}
}

// The allocation tests are not parallel: testing.AllocsPerRun counts every
// goroutine's allocations.
func TestSubstituteNoAllocWithoutPlaceholder(t *testing.T) {
	s := strings.Repeat("plain text ", 100)
	allocs := testing.AllocsPerRun(100, func() { _ = Substitute(s, nil) })
	require.Zero(t, allocs)
}

func TestSubstituteOneAlloc(t *testing.T) {
	vars := map[string]string{"name": "Kim", "code": "123456"}
	s := "Hello {{name}}, your code is {{ code }}. {{missing}} end."
	allocs := testing.AllocsPerRun(100, func() { _ = Substitute(s, vars) })
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
	require.Equal(t, "<p>&lt;b&gt;</p>", Substitute("<p>{{v}}</p>", HTMLEscapeVars(map[string]string{"v": "<b>"})))
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
			benchSink = Substitute(tmpl, vars)
		}
	})
	b.Run("unicode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSink = SubstituteUnicode(tmpl, vars)
		}
	})
	b.Run("no-placeholder", func(b *testing.B) {
		plain := strings.Repeat("plain text ", 50)
		b.ReportAllocs()
		for b.Loop() {
			benchSink = Substitute(plain, vars)
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
		out := Substitute(tc.in, vars)
		require.Equal(t, Substitute(tc.in, nil), strings.ReplaceAll(out, "\x00", ""), tc.in)
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
