package email

import (
	"errors"
	"fmt"
	"html"
	"net/url"
	"strings"

	mail "github.com/wneessen/go-mail"

	"github.com/formward/formward/ports"
)

// OwnerNotification is ports.ActionInput.Notification of a form's owner email.
const OwnerNotification = "owner"

// maxOwnerRecipients bounds the owner email's recipients (the form settings allow 20).
const maxOwnerRecipients = 20

// composeOwner builds the owner notification of a response: to every owner address in the
// config's "to" list, reply-to the respondent, every answer by label in form order (arrays
// joined with ", ", files as links), in HTML with the values escaped and as plain text.
func (m *Mailer) composeOwner(in ports.ActionInput) (*mail.Msg, error) {
	to, err := ownerRecipients(in.Config["to"])
	if err != nil {
		return nil, err
	}
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := msg.FromFormat(DefaultFromName, m.from); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	if err := msg.To(to...); err != nil {
		return nil, fmt.Errorf("owner addresses: %w", err)
	}
	if in.ReplyTo != "" {
		if addr, err := parseOne(headerValue(in.ReplyTo)); err == nil {
			if err := msg.ReplyTo(addr); err != nil {
				return nil, fmt.Errorf("reply-to: %w", err)
			}
		}
	}
	msg.Subject(OwnerSubject(in))
	msg.SetDate()
	msg.SetMessageID()
	text, htmlBody := OwnerBody(in)
	msg.SetBodyString(mail.TypeTextPlain, text)
	msg.AddAlternativeString(mail.TypeTextHTML, htmlBody)
	return msg, nil
}

// ownerRecipients reads the owner addresses: 1 to 20 valid addresses. Anything else fails the
// send permanently.
func ownerRecipients(v any) ([]string, error) {
	var raw []string
	switch v := v.(type) {
	case []string:
		raw = v
	case []any:
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, errors.New("owner notification: to must be a list of addresses")
			}
			raw = append(raw, s)
		}
	default:
		return nil, errors.New("owner notification: to must be a list of addresses")
	}
	if len(raw) == 0 || len(raw) > maxOwnerRecipients {
		return nil, fmt.Errorf("owner notification: to needs 1 to %d addresses", maxOwnerRecipients)
	}
	out := make([]string, len(raw))
	for i, a := range raw {
		addr, err := parseOne(headerValue(a))
		if err != nil {
			return nil, fmt.Errorf("owner notification: %q is not one valid email address", headerValue(a))
		}
		out[i] = addr
	}
	return out, nil
}

// OwnerSubject is "New response to <form name>", or the subject the respondent's post set.
func OwnerSubject(in ports.ActionInput) string {
	if s := headerValue(in.Subject); s != "" {
		return s
	}
	name := headerValue(in.FormName)
	if name == "" {
		name = in.FormID
	}
	return "New response to " + name
}

// OwnerBody renders every answer by label in form order, as plain text and as HTML.
func OwnerBody(in ports.ActionInput) (text, htmlBody string) {
	var t, h strings.Builder
	name := in.FormName
	if name == "" {
		name = in.FormID
	}
	fmt.Fprintf(&t, "New response to %s\n\n", name)
	h.WriteString(`<!doctype html><html><body style="font-family:sans-serif">`)
	fmt.Fprintf(&h, "<h1 style=\"font-size:1.2em\">New response to %s</h1>\n<table cellpadding=\"6\" style=\"border-collapse:collapse\">\n", html.EscapeString(name))
	for _, a := range in.Answers {
		value := strings.Join(a.Values, ", ")
		if value == "" {
			value = "—"
		}
		fmt.Fprintf(&t, "%s:\n%s\n\n", a.Label, value)
		fmt.Fprintf(&h, "<tr><th align=\"left\" valign=\"top\">%s</th><td>", html.EscapeString(a.Label))
		switch {
		case len(a.Values) == 0:
			h.WriteString("—")
		case a.File:
			for i, v := range a.Values {
				if i > 0 {
					h.WriteString("<br>")
				}
				h.WriteString(fileLink(v))
			}
		default:
			h.WriteString(strings.ReplaceAll(html.EscapeString(strings.Join(a.Values, ", ")), "\n", "<br>"))
		}
		h.WriteString("</td></tr>\n")
	}
	h.WriteString("</table>\n")
	footer := fmt.Sprintf("Submission %s, received %s.", in.SubmissionID, in.SubmittedAt.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&t, "%s\n", footer)
	fmt.Fprintf(&h, "<p style=\"color:#555\">%s</p></body></html>\n", html.EscapeString(footer))
	return t.String(), h.String()
}

// fileLink is an HTML link to an http(s) URL, or the value as text when it is not one.
func fileLink(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return html.EscapeString(v)
	}
	name := v
	if i := strings.LastIndex(u.Path, "/"); i >= 0 && i < len(u.Path)-1 {
		name = u.Path[i+1:]
	}
	return `<a href="` + html.EscapeString(v) + `">` + html.EscapeString(name) + `</a>`
}
