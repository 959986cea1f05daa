// Package workspace holds the use cases of a workspace as a whole: workspaces and their settings, the
// audit log, respondents' privacy requests and the retention job.
package workspace
