package persistence

import (
	"context"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/ports"
)

// FormStatsRepository stores the daily counts of forms (form_stats_daily) and their fill-time
// histograms (form_fill_times_daily).
type FormStatsRepository struct{ db *DB }

var _ ports.FormStatsRepository = (*FormStatsRepository)(nil)

// NewFormStatsRepository returns the repository.
func NewFormStatsRepository(db *DB) *FormStatsRepository { return &FormStatsRepository{db: db} }

// The counts of a form deleted meanwhile are dropped by the EXISTS guard (the foreign key
// would refuse them and the whole batch with them).
const (
	addDaySQL = `INSERT INTO form_stats_daily (form_id, day, views, starts, submissions, completions)
		SELECT ?, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT)
		WHERE EXISTS (SELECT 1 FROM forms WHERE id = ?)
		ON CONFLICT (form_id, day) DO UPDATE SET views = form_stats_daily.views + excluded.views,
			starts = form_stats_daily.starts + excluded.starts, submissions = form_stats_daily.submissions + excluded.submissions,
			completions = form_stats_daily.completions + excluded.completions`
	addFillSQL = `INSERT INTO form_fill_times_daily (form_id, day, bucket_seconds, completions)
		SELECT ?, CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS BIGINT)
		WHERE EXISTS (SELECT 1 FROM forms WHERE id = ?)
		ON CONFLICT (form_id, day, bucket_seconds) DO UPDATE SET completions = form_fill_times_daily.completions + excluded.completions`
)

// Add adds the counts to the stored ones in one transaction.
func (r *FormStatsRepository) Add(ctx context.Context, days []ports.FormDay) error {
	if len(days) == 0 {
		return nil
	}
	return r.db.tx(ctx, func(tx *gorm.DB) error {
		for _, d := range days {
			day := toMillis(d.Day)
			if err := tx.Exec(addDaySQL, d.FormID, day, d.Views, d.Starts, d.Submissions, d.Completions, d.FormID).Error; err != nil {
				return mapErr("add form stats", err)
			}
			buckets := make([]int, 0, len(d.FillTimes))
			for b := range d.FillTimes {
				buckets = append(buckets, b)
			}
			sort.Ints(buckets) // one order for every writer: no deadlock between processes
			for _, b := range buckets {
				if n := d.FillTimes[b]; n > 0 {
					if err := tx.Exec(addFillSQL, d.FormID, day, b, n, d.FormID).Error; err != nil {
						return mapErr("add form fill times", err)
					}
				}
			}
		}
		return nil
	})
}

type formDayRow struct {
	FormID      string `gorm:"column:form_id"`
	Day         int64  `gorm:"column:day"`
	Views       int64  `gorm:"column:views"`
	Starts      int64  `gorm:"column:starts"`
	Submissions int64  `gorm:"column:submissions"`
	Completions int64  `gorm:"column:completions"`
}

type fillRow struct {
	Day           int64 `gorm:"column:day"`
	BucketSeconds int   `gorm:"column:bucket_seconds"`
	Completions   int64 `gorm:"column:completions"`
}

// Daily returns the stored days of the form between from and to (inclusive), oldest first.
func (r *FormStatsRepository) Daily(ctx context.Context, formID string, from, to time.Time) ([]ports.FormDay, error) {
	var rows []formDayRow
	err := r.db.read(ctx).Raw(`SELECT form_id, day, views, starts, submissions, completions FROM form_stats_daily
		WHERE form_id = ? AND day >= ? AND day <= ? ORDER BY day`, formID, toMillis(from), toMillis(to)).Scan(&rows).Error
	if err != nil {
		return nil, mapErr("read form stats", err)
	}
	var fills []fillRow
	err = r.db.read(ctx).Raw(`SELECT day, bucket_seconds, completions FROM form_fill_times_daily
		WHERE form_id = ? AND day >= ? AND day <= ?`, formID, toMillis(from), toMillis(to)).Scan(&fills).Error
	if err != nil {
		return nil, mapErr("read form fill times", err)
	}
	out := make([]ports.FormDay, len(rows))
	index := make(map[int64]int, len(rows))
	for i, row := range rows {
		out[i] = ports.FormDay{FormID: row.FormID, Day: fromMillis(row.Day), Views: row.Views, Starts: row.Starts,
			Submissions: row.Submissions, Completions: row.Completions, FillTimes: map[int]int64{}}
		index[row.Day] = i
	}
	for _, f := range fills {
		if i, ok := index[f.Day]; ok {
			out[i].FillTimes[f.BucketSeconds] += f.Completions
		}
	}
	return out, nil
}
