package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/docs"
	"github.com/formward/formward/domain/form"
)

// Every ```html recipe of docs/embedding.md is one the share panel offers: a recipe added to the
// page without a place in the panel fails here.
func TestShareOffersEveryRecipeOfTheEmbeddingPage(t *testing.T) {
	blocks := strings.Split(docs.Embedding, "```html\n")[1:]
	if len(blocks) != 2 {
		t.Fatalf("docs/embedding.md has %d html recipes; the share panel offers 2 (iframe, script): give the new one its place", len(blocks))
	}
	for _, b := range blocks {
		b, _, _ = strings.Cut(b, "\n```")
		if b != recipes.frame && !strings.HasPrefix(b, recipes.formHead) {
			t.Fatalf("a recipe of docs/embedding.md the panel does not offer:\n%s", b)
		}
	}
	if _, err := parseEmbedRecipes("# nothing here"); err == nil {
		t.Fatal("a page without recipes parsed")
	}
}

func TestEmbedSnippetsForAForm(t *testing.T) {
	ph := "you@example.org"
	help, blank := "We write <only> here.\nNever shared.", " "
	n := 0
	f, err := form.New("frm_1", "wsp_1", form.Draft{Name: `Tom & Jerry's "sign-up"`, Fields: []form.FieldSpec{
		{Label: "Email", Type: "email", Required: true, Placeholder: &ph, Help: &help},
		{Label: "Age", Type: "number", Help: &blank},
		{Label: "Notes <b>", Type: "textarea"},
		{Label: "Size", Type: "dropdown", Options: []string{"S", `M "medium"`}},
		{Label: "Plan", Type: "radio", Options: []string{"Free", "Pro"}, Required: true},
		{Label: "Topics", Type: "checkbox", Options: []string{"Go", "Rust"}},
		{Label: "I agree", Type: "checkbox", Required: true},
		{Label: "Born", Type: "date"},
		{Label: "CV", Type: "file"},
		{Label: "Campaign", Type: "text", Hidden: true},
		{Label: "Status", Type: "text"},
	}}, func() string { n++; return "fld_" + string(rune('a'+n)) }, form.DefaultLimits, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://forms.acme.test/f/frm_1"
	frame := recipes.iframeSnippet(url, f.Name())
	if !strings.Contains(frame, `src="`+url+`"`) || !strings.Contains(frame, `title="Tom &amp; Jerry&#39;s &#34;sign-up&#34;"`) ||
		strings.Contains(frame, docFormURL) || !strings.Contains(frame, `loading="lazy"`) {
		t.Fatalf("iframe snippet:\n%s", frame)
	}

	js := recipes.jsonSnippet(url, f.Fields())
	fs := f.Fields()
	for _, want := range []string{
		`const FORM = "` + url + `";`,
		`<form id="signup" novalidate>`,
		"<label for=\"email\">Email</label>\n  <p id=\"email-help\" class=\"help\">We write &lt;only&gt; here.<br>Never shared.</p>\n" +
			"  <input id=\"email\" name=\"" + fs[0].ID + "\" type=\"email\" placeholder=\"you@example.org\" required aria-describedby=\"email-help\">\n  <p id=\"email-error\" class=\"error\" hidden></p>",
		`const help = document.getElementById(input.id + "-help");`,
		`<input id="age" name="` + fs[1].ID + `" type="number">`,
		`<label for="notes_b">Notes &lt;b&gt;</label>`,
		`<textarea id="notes_b" name="` + fs[2].ID + `"></textarea>`,
		`<select id="size" name="` + fs[3].ID + `">`,
		`<option value="M &#34;medium&#34;">M &#34;medium&#34;</option>`,
		`<select id="plan" name="` + fs[4].ID + `" required>`,
		`<select id="topics" name="` + fs[5].ID + `" multiple>`,
		`<input id="i_agree" name="` + fs[6].ID + `" type="checkbox" required>`,
		`<input id="born" name="` + fs[7].ID + `" type="date">`,
		`CV (` + fs[8].ID + `): a file field`,
		`Campaign (` + fs[9].ID + `): a hidden field`,
		// "status" is the script's own element: the control takes the field ID instead.
		`<input id="` + fs[10].ID + `" name="` + fs[10].ID + `" type="text">`,
		`<p id="status" role="status"></p>`,
		`el.type === "select-multiple"`,
	} {
		if !strings.Contains(js, want) {
			t.Fatalf("the JSON snippet lacks %q:\n%s", want, js)
		}
	}
	if strings.Contains(js, docFormURL) || strings.Contains(js, "fld_EMAIL_FIELD_ID") || strings.Contains(js, `name="`+fs[8].ID+`"`) {
		t.Fatalf("the JSON snippet keeps the example's address or fields, or names the file field:\n%s", js)
	}
	// The script is the page's, word for word after the address.
	_, docScript, _ := strings.Cut(recipes.formTail, "<script")
	if _, gotScript, _ := strings.Cut(js, "<script"); gotScript != strings.ReplaceAll(docScript, docFormURL, url) {
		t.Fatal("the script differs from docs/embedding.md")
	}
}
