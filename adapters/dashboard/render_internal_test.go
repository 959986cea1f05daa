package dashboard

import "testing"

// TestSentenceNamesThePropertyInWords: a domain message that starts with a property's name
// reads as a sentence in the dashboard; any other message only gets its capital and full stop.
func TestSentenceNamesThePropertyInWords(t *testing.T) {
	for in, want := range map[string]string{
		"url must use https":                                             "The URL must use https.",
		"redirect_url must be at most 2048 characters":                   "The redirect URL must be at most 2048 characters.",
		"field_id is required":                                           "The field ID is required.",
		"service_account_json must contain client_email and private_key": "The service account JSON must contain client_email and private_key.",
		"options are required":                                           "Options are required.",
		"name must be 1 to 200 characters.":                              "The name must be 1 to 200 characters.",
		"it must be a number":                                            "It must be a number.",
		"this field is required":                                         "This field is required.",
		"Enter a valid email address":                                    "Enter a valid email address.",
		"show_if.field_id must name an earlier field":                    "The show if field ID must name an earlier field.",
		"trigger.type is required":                                       "The trigger type is required.",
		"":                                                               "",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
