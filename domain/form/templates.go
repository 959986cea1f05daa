package form

import "strconv"

// Template is a starting point for a new form: a name, one line saying what it asks, and the
// draft it creates. The dashboard's "New form" offers them next to a blank form; a form made
// from one is an ordinary draft, created and checked like any other.
type Template struct {
	// ID names the template in a request ("contact", "job_application", …).
	ID string
	// Name is the template's title, and the new form's name when the person gives none.
	Name string
	// Summary is one line of what the form asks.
	Summary string
	draft   func() Draft
}

// Draft returns a new copy of the template's draft, named name (the template's own name when
// name is empty); changing it changes no other copy.
func (t Template) Draft(name string) Draft {
	d := t.draft()
	if name == "" {
		name = t.Name
	}
	d.Name = name
	return d
}

// Templates are the starting points, in the order "New form" offers them.
func Templates() []Template {
	return []Template{
		{ID: "contact", Name: "Contact", Summary: "Name, email, a subject and the message.", draft: contactTemplate},
		{ID: "job_application", Name: "Job application",
			Summary: "The applicant, the position and a start date, then a CV and a cover letter on page 2.", draft: jobApplicationTemplate},
		{ID: "event_registration", Name: "Event registration",
			Summary: "Attendee, ticket type and the dinner, asking for dietary needs only of dinner guests.", draft: eventRegistrationTemplate},
		{ID: "feedback", Name: "Feedback",
			Summary: "How likely people are to recommend you, from 0 to 10, and why.", draft: feedbackTemplate},
		{ID: "order_request", Name: "Order request",
			Summary: "Product, quantity, delivery date and address, and who is ordering.", draft: orderRequestTemplate},
	}
}

// TemplateByID finds a template by its ID.
func TemplateByID(id string) (Template, bool) {
	for _, t := range Templates() {
		if t.ID == id {
			return t, true
		}
	}
	return Template{}, false
}

// spec is a field of a template: its label, type and key, required or not.
func spec(key, label string, typ FieldType, required bool, options ...string) FieldSpec {
	return FieldSpec{Label: label, Type: string(typ), Key: &key, Required: required, Options: options}
}

// onPage puts a template's field on page n.
func onPage(s FieldSpec, n int) FieldSpec {
	s.Page = &n
	return s
}

// withPlaceholder gives a template's field a placeholder.
func withPlaceholder(s FieldSpec, p string) FieldSpec {
	s.Placeholder = &p
	return s
}

// thanking is the default settings with the template's own thank-you message.
func thanking(msg string) *Settings {
	s := DefaultSettings()
	s.ThankYouMessage = &msg
	return &s
}

func contactTemplate() Draft {
	return Draft{
		Fields: []FieldSpec{
			spec("name", "Your name", TypeText, true),
			spec("email", "Email", TypeEmail, true),
			spec("subject", "Subject", TypeText, false),
			withPlaceholder(spec("message", "Message", TypeTextarea, true), "How can we help?"),
		},
		Settings: thanking("Thank you for your message. We will reply by email."),
	}
}

func jobApplicationTemplate() Draft {
	limit := int64(10 << 20)
	cv := onPage(spec("cv", "CV", TypeFile, true), 2)
	cv.Accept = []string{"application/pdf", "application/msword", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
	cv.MaxFileBytes = &limit
	letter := onPage(spec("cover_letter", "Cover letter", TypeFile, false), 2)
	letter.Accept = append([]string(nil), cv.Accept...)
	letter.MaxFileBytes = &limit
	return Draft{
		Fields: []FieldSpec{
			spec("full_name", "Full name", TypeText, true),
			spec("email", "Email", TypeEmail, true),
			spec("phone", "Phone", TypeText, false),
			spec("position", "Position", TypeDropdown, true, "Engineering", "Design", "Sales", "Support", "Other"),
			spec("start_date", "Earliest start date", TypeDate, false),
			spec("profile_url", "LinkedIn or portfolio link", TypeText, false),
			cv,
			letter,
			onPage(spec("notes", "Anything else we should know?", TypeTextarea, false), 2),
		},
		Settings: thanking("Thank you for applying. We read every application and will be in touch."),
	}
}

func eventRegistrationTemplate() Draft {
	dietary := spec("dietary_needs", "Dietary needs", TypeCheckbox, false, "Vegetarian", "Vegan", "Gluten-free", "Lactose-free", "Other")
	dietary.ShowIf = &ShowIfSpec{Match: "all", Conditions: []ConditionSpec{
		{FieldID: "attending_dinner", Operator: "equals", Value: "Yes", HasValue: true}}}
	other := withPlaceholder(spec("dietary_other", "Other dietary needs or allergies", TypeText, false), "Nut allergy, halal, …")
	other.ShowIf = &ShowIfSpec{Match: "all", Conditions: []ConditionSpec{
		{FieldID: "attending_dinner", Operator: "equals", Value: "Yes", HasValue: true}}}
	return Draft{
		Fields: []FieldSpec{
			spec("full_name", "Full name", TypeText, true),
			spec("email", "Email", TypeEmail, true),
			spec("organisation", "Organisation", TypeText, false),
			spec("ticket", "Ticket type", TypeRadio, true, "Standard", "Student", "Speaker"),
			spec("attending_dinner", "Attending dinner", TypeRadio, true, "Yes", "No"),
			dietary,
			other,
			spec("consent", "I agree to be contacted about this event", TypeCheckbox, true),
		},
		Settings: thanking("You are registered. We will email you the details before the event."),
	}
}

func feedbackTemplate() Draft {
	score := make([]string, 11) // "0" to "10"
	for i := range score {
		score[i] = strconv.Itoa(i)
	}
	return Draft{
		Fields: []FieldSpec{
			spec("recommend", "How likely are you to recommend us to a friend or colleague? (0 = not at all likely, 10 = extremely likely)",
				TypeRadio, true, score...),
			withPlaceholder(spec("reason", "What is the main reason for your score?", TypeTextarea, false), "Tell us in a few words."),
			spec("improve", "What could we do better?", TypeTextarea, false),
			spec("email", "Email, if we may follow up", TypeEmail, false),
		},
		Settings: thanking("Thank you for your feedback."),
	}
}

func orderRequestTemplate() Draft {
	return Draft{
		Fields: []FieldSpec{
			spec("product", "Product", TypeDropdown, true, "Product A", "Product B", "Product C"),
			withPlaceholder(spec("quantity", "Quantity", TypeNumber, true), "1"),
			spec("delivery_date", "Preferred delivery date", TypeDate, false),
			spec("delivery_address", "Delivery address", TypeTextarea, true),
			spec("full_name", "Your name", TypeText, true),
			spec("company", "Company", TypeText, false),
			spec("email", "Email", TypeEmail, true),
			spec("phone", "Phone", TypeText, false),
			spec("notes", "Notes", TypeTextarea, false),
		},
		Settings: thanking("Thank you for your order request. We will confirm it by email."),
	}
}
