package bootstrap

// The IANA time zone database is built into the binary, so a bare container (no
// /usr/share/zoneinfo) still knows every zone a workspace or a person may choose.
import _ "time/tzdata"
