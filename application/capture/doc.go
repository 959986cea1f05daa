// Package capture holds the use cases of respondents' answers: public and API capture, uploaded files,
// reading, editing and deleting submissions, exports, and form statistics.
package capture
