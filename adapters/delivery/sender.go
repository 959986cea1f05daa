package delivery

import (
	"context"

	"github.com/formward/formward/ports"
)

// Sender is the Client seen through ports.Sender, for the delivery engine.
type Sender struct{ *Client }

var _ ports.Sender = Sender{}

// Send makes one attempt of r; see Client.Deliver.
func (s Sender) Send(ctx context.Context, r ports.OutboundRequest) ports.OutboundResult {
	ctx, span := startSend(ctx, r)
	res := s.Deliver(ctx, Request{
		EndpointID: r.EndpointID, URL: r.URL, Body: r.Body, Event: r.Event,
		DeliveryID: r.DeliveryID, Attempt: r.Attempt, Secret: r.Secret, Headers: r.Headers,
		FormVersion: r.FormVersion, ReplayOf: r.ReplayOf,
	})
	endSend(span, res)
	return ports.OutboundResult{StatusCode: res.StatusCode, Duration: res.Duration, Err: res.Err, BreakerOpen: res.BreakerOpen, RetryAt: res.RetryAt,
		RetryAfter: res.RetryAfter, Answer: res.Answer}
}
