// Package webhooks holds the use cases of webhooks: their settings, the fan-out of events to their
// deliveries, and the delivery engine that sends them.
package webhooks
