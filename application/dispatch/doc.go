// Package dispatch is the fair claim-and-dispatch loop that the webhook delivery engine and the workflow
// run engine share: it claims only what can start at once, within each workspace's share.
package dispatch
