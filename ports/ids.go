package ports

// ID prefixes of every resource, for IDs.New.
const (
	PrefixWorkspace   = "wsp"
	PrefixAPIKey      = "key"
	PrefixForm        = "frm"
	PrefixField       = "fld"
	PrefixSubmission  = "sub"
	PrefixEvent       = "evt"
	PrefixWebhook     = "whk"
	PrefixDelivery    = "dlv"
	PrefixWorkflow    = "wfl"
	PrefixAction      = "act"
	PrefixIntegration = "int"
	PrefixUser        = "usr"
	PrefixMembership  = "mem"
	PrefixInvitation  = "inv"
	PrefixSession     = "ses"
	PrefixAudit       = "aud"
	PrefixFlash       = "fls"
	PrefixDraft       = "drf"
)
