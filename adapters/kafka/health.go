package kafka

import (
	"context"
	"errors"
	"fmt"

	kafkago "github.com/segmentio/kafka-go"
)

// Reachable dials the brokers in turn and asks the first that answers for the cluster's
// brokers: nil once one answered. The metadata request names no topic, so it never makes a
// broker create one.
func Reachable(ctx context.Context, brokers []string) error {
	if len(brokers) == 0 {
		return errors.New("kafka: no brokers configured")
	}
	var dialer kafkago.Dialer
	var last error
	for _, b := range brokers {
		conn, err := dialer.DialContext(ctx, "tcp", b)
		if err != nil {
			last = err
			continue
		}
		if deadline, ok := ctx.Deadline(); ok {
			_ = conn.SetDeadline(deadline)
		}
		_, err = conn.Brokers()
		_ = conn.Close()
		if err == nil {
			return nil
		}
		last = err
	}
	return fmt.Errorf("kafka: no broker answered: %w", last)
}
