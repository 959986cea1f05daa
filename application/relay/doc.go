// Package relay moves committed events from the outbox to the event bus.
package relay
