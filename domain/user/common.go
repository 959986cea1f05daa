package user

import (
	_ "embed"
	"strings"
	"sync"
)

// commonPasswords is a list of passwords of 12 characters or more that appear often in
// breach corpora; a password on it is refused whatever its length.
//
//go:embed common_passwords.txt
var commonPasswords string

var commonSet = sync.OnceValue(func() map[string]struct{} {
	set := map[string]struct{}{}
	for _, line := range strings.Split(commonPasswords, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			set[strings.ToLower(line)] = struct{}{}
		}
	}
	return set
})

// IsCommonPassword reports whether pw (compared case-insensitively) is on the embedded list.
func IsCommonPassword(pw string) bool {
	_, ok := commonSet()[strings.ToLower(pw)]
	return ok
}
