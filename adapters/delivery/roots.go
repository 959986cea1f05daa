package delivery

import "crypto/x509"

// RootCAs returns the system certificate pool plus the PEM certificates of extraCAFile (none
// when it is empty), for the other outbound clients that honour FORMWARD_WEBHOOK_CA_FILE.
func RootCAs(extraCAFile string) (*x509.CertPool, error) {
	return rootCAs(extraCAFile)
}
