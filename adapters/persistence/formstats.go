package persistence

import (
	"context"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/formward/formward/domain/formstats"
	"github.com/formward/formward/ports"
)

// FormStatsRepository stores the daily counts of forms (form_stats_daily), their fill-time
// histograms (form_fill_times_daily), their answer counts (form_answer_stats_daily) and the
// pages their visits reached (form_page_stats_daily).
type FormStatsRepository struct{ db *DB }

var _ ports.FormStatsRepository = (*FormStatsRepository)(nil)

// NewFormStatsRepository returns the repository.
func NewFormStatsRepository(db *DB) *FormStatsRepository { return &FormStatsRepository{db: db} }

// The counts of a form deleted meanwhile are dropped by the EXISTS guard (the foreign key
// would refuse them and the whole batch with them).
const (
	addDaySQL = `INSERT INTO form_stats_daily (form_id, day, views, starts, submissions, completions, form_submissions, api_submissions)
		SELECT ?, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT)
		WHERE EXISTS (SELECT 1 FROM forms WHERE id = ?)
		ON CONFLICT (form_id, day) DO UPDATE SET views = form_stats_daily.views + excluded.views,
			starts = form_stats_daily.starts + excluded.starts, submissions = form_stats_daily.submissions + excluded.submissions,
			completions = form_stats_daily.completions + excluded.completions,
			form_submissions = form_stats_daily.form_submissions + excluded.form_submissions,
			api_submissions = form_stats_daily.api_submissions + excluded.api_submissions`
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
			res := tx.Exec(addDaySQL, d.FormID, day, d.Views, d.Starts, d.Submissions, d.Completions, d.FormSubmissions, d.APISubmissions, d.FormID)
			if res.Error != nil {
				return mapErr("add form stats", res.Error)
			}
			if res.RowsAffected == 0 {
				continue // the form was deleted: its counts go with it
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
			if err := addAnswers(tx, d.FormID, day, d.Fields); err != nil {
				return err
			}
			if err := addPages(tx, d.FormID, day, d.Pages); err != nil {
				return err
			}
		}
		return nil
	})
}

// rowsPerInsert bounds the rows of one multi-row INSERT (and its parameters, 6 a row, well
// under both dialects' limits).
const rowsPerInsert = 500

// addAnswers adds a form day's answer counts with a few multi-row upserts, in one order for
// every writer (no deadlock between processes).
func addAnswers(tx *gorm.DB, formID string, day int64, fields map[string]formstats.FieldCounts) error {
	type row struct {
		field string
		kind  string
		value string
		n     int64
	}
	var rows []row
	for id, fc := range fields {
		if fc.Answered > 0 {
			rows = append(rows, row{id, answeredKind, "", fc.Answered})
		}
		for o, n := range fc.Options {
			if n > 0 {
				rows = append(rows, row{id, optionKind, o, n})
			}
		}
		for v, n := range fc.Numbers {
			if n > 0 {
				rows = append(rows, row{id, numberKind, v, n})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.field != b.field {
			return a.field < b.field
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.value < b.value
	})
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), rowsPerInsert)]
		rows = rows[len(chunk):]
		var sql strings.Builder
		sql.WriteString("INSERT INTO form_answer_stats_daily (form_id, day, field_id, kind, value, count) VALUES ")
		args := make([]any, 0, 6*len(chunk))
		for i, r := range chunk {
			if i > 0 {
				sql.WriteString(", ")
			}
			sql.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(args, formID, day, r.field, r.kind, r.value, r.n)
		}
		sql.WriteString(" ON CONFLICT (form_id, day, field_id, kind, value) DO UPDATE SET count = form_answer_stats_daily.count + excluded.count")
		if err := tx.Exec(sql.String(), args...).Error; err != nil {
			return mapErr("add form answer stats", err)
		}
	}
	return nil
}

// addPages adds a form day's page reach counts in one upsert.
func addPages(tx *gorm.DB, formID string, day int64, pages map[int]int64) error {
	list := make([]int, 0, len(pages))
	for p, n := range pages {
		if n > 0 {
			list = append(list, p)
		}
	}
	if len(list) == 0 {
		return nil
	}
	sort.Ints(list)
	var sql strings.Builder
	sql.WriteString("INSERT INTO form_page_stats_daily (form_id, day, page, reached) VALUES ")
	args := make([]any, 0, 4*len(list))
	for i, p := range list {
		if i > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString("(?, ?, ?, ?)")
		args = append(args, formID, day, p, pages[p])
	}
	sql.WriteString(" ON CONFLICT (form_id, day, page) DO UPDATE SET reached = form_page_stats_daily.reached + excluded.reached")
	if err := tx.Exec(sql.String(), args...).Error; err != nil {
		return mapErr("add form page stats", err)
	}
	return nil
}

// The kinds of form_answer_stats_daily rows.
const (
	answeredKind = "answered"
	optionKind   = "option"
	numberKind   = "number"
)

type formDayRow struct {
	FormID          string `gorm:"column:form_id"`
	Day             int64  `gorm:"column:day"`
	Views           int64  `gorm:"column:views"`
	Starts          int64  `gorm:"column:starts"`
	Submissions     int64  `gorm:"column:submissions"`
	Completions     int64  `gorm:"column:completions"`
	FormSubmissions int64  `gorm:"column:form_submissions"`
	APISubmissions  int64  `gorm:"column:api_submissions"`
}

type answerRow struct {
	Day     int64  `gorm:"column:day"`
	FieldID string `gorm:"column:field_id"`
	Kind    string `gorm:"column:kind"`
	Value   string `gorm:"column:value"`
	Count   int64  `gorm:"column:count"`
}

type pageRow struct {
	Day     int64 `gorm:"column:day"`
	Page    int   `gorm:"column:page"`
	Reached int64 `gorm:"column:reached"`
}

type fillRow struct {
	Day           int64 `gorm:"column:day"`
	BucketSeconds int   `gorm:"column:bucket_seconds"`
	Completions   int64 `gorm:"column:completions"`
}

// Daily returns the stored days of the form between from and to (inclusive), oldest first.
func (r *FormStatsRepository) Daily(ctx context.Context, formID string, from, to time.Time) ([]ports.FormDay, error) {
	var rows []formDayRow
	err := r.db.read(ctx).Raw(`SELECT form_id, day, views, starts, submissions, completions, form_submissions, api_submissions FROM form_stats_daily
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
	var answers []answerRow
	err = r.db.read(ctx).Raw(`SELECT day, field_id, kind, value, count FROM form_answer_stats_daily
		WHERE form_id = ? AND day >= ? AND day <= ?`, formID, toMillis(from), toMillis(to)).Scan(&answers).Error
	if err != nil {
		return nil, mapErr("read form answer stats", err)
	}
	var pages []pageRow
	err = r.db.read(ctx).Raw(`SELECT day, page, reached FROM form_page_stats_daily
		WHERE form_id = ? AND day >= ? AND day <= ?`, formID, toMillis(from), toMillis(to)).Scan(&pages).Error
	if err != nil {
		return nil, mapErr("read form page stats", err)
	}
	out := make([]ports.FormDay, len(rows))
	index := make(map[int64]int, len(rows))
	for i, row := range rows {
		out[i] = ports.FormDay{FormID: row.FormID, Day: fromMillis(row.Day), Views: row.Views, Starts: row.Starts,
			Submissions: row.Submissions, Completions: row.Completions, FormSubmissions: row.FormSubmissions,
			APISubmissions: row.APISubmissions, FillTimes: map[int]int64{}, Fields: map[string]formstats.FieldCounts{}, Pages: map[int]int64{}}
		index[row.Day] = i
	}
	for _, f := range fills {
		if i, ok := index[f.Day]; ok {
			out[i].FillTimes[f.BucketSeconds] += f.Completions
		}
	}
	for _, a := range answers {
		i, ok := index[a.Day]
		if !ok {
			continue
		}
		fc := out[i].Fields[a.FieldID]
		switch a.Kind {
		case answeredKind:
			fc.Answered += a.Count
		case optionKind:
			if fc.Options == nil {
				fc.Options = map[string]int64{}
			}
			fc.Options[a.Value] += a.Count
		case numberKind:
			if fc.Numbers == nil {
				fc.Numbers = map[string]int64{}
			}
			fc.Numbers[a.Value] += a.Count
		}
		out[i].Fields[a.FieldID] = fc
	}
	for _, p := range pages {
		if i, ok := index[p.Day]; ok {
			out[i].Pages[p.Page] += p.Reached
		}
	}
	return out, nil
}
