package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/time/rate"

	"github.com/formward/formward/adapters/kafka"
	"github.com/formward/formward/application/relay"
)

// defaultBackfillRate is the backfill's default pace, in snapshots per second. Measured with
// `make bench` during a backfill against without (docs/performance.md): the decrypting reads of
// a backfill at this pace leave capture above the 80% it must keep.
const defaultBackfillRate = 1000

// eventsCommand is `formward events`: publish retained events again (replay) and snapshots of
// the stored submissions (backfill) to Kafka, for consumers that lost their state or join late.
func (c *cli) eventsCommand() *cobra.Command {
	events := &cobra.Command{Use: "events", Short: "Replay retained events, or backfill snapshots of stored submissions, to Kafka"}

	var since, until, formID string
	var afterSeq int
	replay := &cobra.Command{Use: "replay", Short: "Publish again the retained events of a time range (same event IDs, header ce_replay: true)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, err := parseFlagTime("--since", since, true)
			if err != nil {
				return err
			}
			to, err := parseFlagTime("--until", until, false)
			if err != nil {
				return err
			}
			return c.withEventsTopic(cmd.Context(), map[string]string{"ce_replay": "true"}, func(rt *Runtime, pub *kafka.Publisher) error {
				p, err := rt.App.Commands.ReplayEvents.Handle(cmd.Context(), relay.ReplayEvents{Since: from, Until: to, FormID: formID, AfterSeq: int64(afterSeq), To: pub,
					Progress: func(p relay.ReplayProgress) {
						fmt.Fprintf(c.stderr, "published %d events (up to seq %d of %d)\n", p.Published, p.Seq, p.ToSeq)
					}})
				if err != nil {
					if p.Seq > 0 {
						return fmt.Errorf("%w\nstopped after seq %d: run the same command with --after-seq %d to go on", err, p.Seq, p.Seq)
					}
					return err
				}
				return c.printJSON(map[string]any{"events_published": p.Published, "last_seq": p.Seq, "topic": c.cfg.KafkaTopic})
			})
		}}
	rf := c.flags(replay.Flags(), "events-")
	rf.String(&since, "since", "", "start of the range, RFC 3339 (required; no earlier than now minus --outbox-retention)")
	rf.String(&until, "until", "", "end of the range, RFC 3339 (default: now)")
	rf.String(&formID, "form", "", "only the events of this form")
	rf.Int(&afterSeq, "after-seq", 0, "resume an interrupted replay after the seq it reported")
	bindKafka(c.flags(replay.Flags(), ""), &c.cfg)

	var all, restart bool
	var perSecond int
	backfill := &cobra.Command{Use: "backfill", Short: "Publish one submission.snapshot per stored submission of a form (--form) or of every form (--all), resumable", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			scope := formID
			switch {
			case all && formID != "":
				return errors.New("give --form ID or --all, not both")
			case all:
				scope = relay.BackfillAll
			case formID == "":
				return errors.New("give --form ID, or --all for every form of every workspace")
			}
			if perSecond < 0 {
				return errors.New("--rate must be 0 (no limit) or more")
			}
			return c.withEventsTopic(cmd.Context(), nil, func(rt *Runtime, pub *kafka.Publisher) error {
				var wait func(context.Context, int) error
				if perSecond > 0 {
					lim := rate.NewLimiter(rate.Limit(perSecond), relay.ReplayBatch)
					wait = func(ctx context.Context, n int) error { return lim.WaitN(ctx, n) }
				}
				p, err := rt.App.Commands.BackfillEvents.Handle(cmd.Context(), relay.BackfillEvents{FormID: scope, Topic: c.cfg.KafkaTopic, To: pub,
					Restart: restart, Wait: wait, Progress: func(p relay.BackfillProgress) {
						fmt.Fprintf(c.stderr, "published %d snapshots (form %s)\n", p.Published, p.FormID)
					}})
				if p.Resumed {
					fmt.Fprintf(c.stderr, "resumed backfill %s\n", p.ID)
				}
				if err != nil {
					if p.ID != "" {
						return fmt.Errorf("%w\nbackfill %s stopped after %d snapshots: run the same command again to resume", err, p.ID, p.Published)
					}
					return err
				}
				return c.printJSON(map[string]any{"backfill_id": p.ID, "snapshots_published": p.Published, "resumed": p.Resumed, "topic": c.cfg.KafkaTopic})
			})
		}}
	bf := c.flags(backfill.Flags(), "events-")
	bf.String(&formID, "form", "", "the form whose submissions to publish")
	bf.Bool(&all, "all", false, "every form of every workspace")
	bf.Bool(&restart, "restart", false, "start over instead of resuming an interrupted backfill of the same topic and scope")
	bf.Int(&perSecond, "rate", defaultBackfillRate, "most snapshots published per second (0: no limit), so capture keeps its speed")
	bindKafka(c.flags(backfill.Flags(), ""), &c.cfg)

	events.AddCommand(replay, backfill)
	return events
}

// withEventsTopic runs fn with the runtime and a publisher to the configured topic, created
// when missing, whose messages carry headers.
func (c *cli) withEventsTopic(ctx context.Context, headers map[string]string, fn func(*Runtime, *kafka.Publisher) error) error {
	tc, err := topicConfig(c.cfg)
	if err != nil {
		return errors.New("events needs Kafka: set --kafka-brokers or FORMWARD_KAFKA_BROKERS (comma-separated host:port)")
	}
	tc.Publisher.Headers = headers
	return c.withRuntime(ctx, func(rt *Runtime) error {
		pub, closePub, err := kafka.ProvidePublisher(ctx, tc)
		if err != nil {
			return err
		}
		defer closePub()
		return fn(rt, pub)
	})
}

// parseFlagTime reads an RFC 3339 flag; a missing optional one is the zero time.
func parseFlagTime(name, v string, required bool) (time.Time, error) {
	if v == "" {
		if required {
			return time.Time{}, fmt.Errorf("%s is required (RFC 3339, for example 2026-11-28T09:00:00Z)", name)
		}
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 time such as 2026-11-28T09:00:00Z", name, v)
	}
	return t, nil
}
