package httpkit

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/xuri/excelize/v2"

	"github.com/formward/formward/application/capture"
	"github.com/formward/formward/domain/submission"
)

// exportFormats are the export file formats: media type and file extension.
var exportFormats = map[string]struct{ mediaType, ext string }{
	"csv":    {"text/csv; charset=utf-8", "csv"},
	"xlsx":   {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"},
	"ndjson": {"application/x-ndjson", "ndjson"},
}

// exportFlushRows is how often (in rows) a streaming export pushes what it wrote to the client.
const exportFlushRows = 1000

// xlsxMaxRows is a worksheet's row limit (header included); an export goes on in a new
// worksheet past it.
const xlsxMaxRows = 1_048_576

// flusher pushes buffered output to the client every exportFlushRows rows.
type flusher struct {
	c   *gin.Context
	buf *bufio.Writer
	// before empties a writer that buffers in front of buf (the CSV writer).
	before func()
	rows   int
}

func (f *flusher) row() error {
	f.rows++
	if f.rows%exportFlushRows != 0 {
		return nil
	}
	return f.flush()
}

func (f *flusher) flush() error {
	if f.before != nil {
		f.before()
	}
	if err := f.buf.Flush(); err != nil {
		return err
	}
	f.c.Writer.Flush()
	return nil
}

func exportCSV(c *gin.Context, e *capture.Export, fileURL FileLinker) error {
	buf := bufio.NewWriterSize(c.Writer, 64<<10)
	w := csv.NewWriter(buf)
	w.UseCRLF = true
	fl := &flusher{c: c, buf: buf, before: w.Flush}
	cells := safeCells(e.Columns, nil)
	if err := w.Write(cells); err != nil {
		return err
	}
	var row []string
	err := e.Each(c.Request.Context(), func(s *submission.Submission) error {
		row = e.Row(s, fileURL, row)
		cells = safeCells(row, cells)
		for i, v := range cells {
			if strings.IndexByte(v, '\r') >= 0 {
				// encoding/csv drops a carriage return that is not part of a line end: keep it
				// as a line break.
				cells[i] = strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", "\n"), "\r", "\n")
			}
		}
		if err := w.Write(cells); err != nil {
			return err
		}
		return fl.row()
	})
	if err != nil {
		return err
	}
	if err := fl.flush(); err != nil {
		return err
	}
	return w.Error()
}

func exportNDJSON(c *gin.Context, e *capture.Export, fileURL FileLinker) error {
	buf := bufio.NewWriterSize(c.Writer, 64<<10)
	fl := &flusher{c: c, buf: buf}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	err := e.Each(c.Request.Context(), func(s *submission.Submission) error {
		if err := enc.Encode(PresentSubmission(s, fileURL)); err != nil {
			return err
		}
		return fl.row()
	})
	if err != nil {
		return err
	}
	return fl.flush()
}

// exportXLSX writes the rows through excelize's stream writer, which keeps a bounded part of
// the sheet in memory and the rest in a temporary file; the workbook is sent when complete.
// Cells are typed by their column's kind (xlsxFormats.fill); none is guarded with an apostrophe:
// a workbook keeps formulas apart from values, and a text cell holds text, whatever it begins
// with.
func exportXLSX(c *gin.Context, e *capture.Export, fileURL FileLinker) error {
	f := excelize.NewFile()
	defer func() { _ = f.Close() }()
	sheet := "Submissions"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	formats, err := newXLSXFormats(f)
	if err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	values := make([]any, len(e.Columns))
	put := func(rowNum int) error {
		cell, err := excelize.CoordinatesToCellName(1, rowNum)
		if err != nil {
			return err
		}
		return sw.SetRow(cell, values)
	}
	header := func() error {
		for i, title := range e.Columns {
			values[i] = title
		}
		return put(1)
	}
	if err := header(); err != nil {
		return err
	}
	rowNum, sheets := 1, 1
	var row []string
	err = e.Each(c.Request.Context(), func(s *submission.Submission) error {
		if rowNum == xlsxMaxRows {
			if err := sw.Flush(); err != nil {
				return err
			}
			sheets++
			sheet = "Submissions " + strconv.Itoa(sheets)
			if _, err := f.NewSheet(sheet); err != nil {
				return err
			}
			if sw, err = f.NewStreamWriter(sheet); err != nil {
				return err
			}
			if err := header(); err != nil {
				return err
			}
			rowNum = 1
		}
		rowNum++
		row = e.Row(s, fileURL, row)
		formats.fill(values, row, e.Kinds)
		return put(rowNum)
	})
	if err != nil {
		return err
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	buf := bufio.NewWriterSize(c.Writer, 64<<10)
	if _, err := f.WriteTo(buf); err != nil {
		return err
	}
	return buf.Flush()
}

// Excel's 1900 date system, which LibreOffice reads alike from 1 March 1900 on: a date is the
// number of days since 30 December 1899 (Excel counts a 29 February 1900 that never was, so
// earlier serials mean different days in the two), the time of day its fraction.
var (
	xlsxEpoch    = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	xlsxFirstDay = time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC)
)

// xlsxMaxNumber is the largest magnitude an Excel cell holds.
const xlsxMaxNumber = 9.99999999999999e307

// xlsxFormats are the workbook's styles for dates and date-times: their number formats.
type xlsxFormats struct{ date, dateTime int }

func newXLSXFormats(f *excelize.File) (xlsxFormats, error) {
	date, dateTime := "yyyy-mm-dd", "yyyy-mm-dd hh:mm:ss"
	var s xlsxFormats
	var err error
	if s.date, err = f.NewStyle(&excelize.Style{CustomNumFmt: &date}); err != nil {
		return s, err
	}
	s.dateTime, err = f.NewStyle(&excelize.Style{CustomNumFmt: &dateTime})
	return s, err
}

// fill sets values to the cells of one exported row: an empty cell is left out, a number
// column's answer is a number, a date column's a date and submitted_at a date-time (UTC), each
// shown in ISO order; everything else is an inline string, cut by excelize at 32,767
// characters. Numbers keep Excel's 15 significant digits. A value a spreadsheet cannot hold as
// typed (a date before 1 March 1900, a number beyond Excel's range) stays text.
func (fm xlsxFormats) fill(values []any, row []string, kinds []capture.ColumnKind) {
	for i, v := range row {
		values[i] = nil
		if v == "" {
			continue
		}
		values[i] = v
		switch kinds[i] {
		case capture.NumberColumn:
			if n, err := strconv.ParseFloat(v, 64); err == nil && math.Abs(n) <= xlsxMaxNumber {
				values[i] = excelDigits(n)
			}
		case capture.DateColumn:
			if d, err := time.Parse(time.DateOnly, v); err == nil && !d.Before(xlsxFirstDay) {
				values[i] = excelize.Cell{StyleID: fm.date, Value: float64((d.Unix() - xlsxEpoch.Unix()) / 86400)}
			}
		case capture.TimeColumn:
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil && !t.Before(xlsxFirstDay) {
				days := float64(t.UnixMilli()-xlsxEpoch.UnixMilli()) / float64(24*time.Hour/time.Millisecond)
				values[i] = excelize.Cell{StyleID: fm.dateTime, Value: excelDigits(days)}
			}
		}
	}
}

// excelDigits rounds n to the 15 significant digits a spreadsheet keeps. excelize writes a
// number with its first 15 digits and drops the rest, so a time such as 12:02:00 (0.5013888…
// of a day) would otherwise read back as 12:01:59.99999.
func excelDigits(n float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(n, 'g', 15, 64), 64)
	if err != nil {
		return n
	}
	return r
}

// safeCells copies cells into dst with formula injection defused for CSV: a cell that begins
// with =, +, -, @, a tab, a carriage return or a line feed gets a leading apostrophe, so that
// a spreadsheet shows it as text instead of running it. White space counts because some
// spreadsheets trim it, line breaks included, before they look for a formula.
func safeCells(cells, dst []string) []string {
	dst = dst[:0]
	for _, v := range cells {
		if v != "" && strings.IndexByte("=+-@\t\r\n", v[0]) >= 0 {
			v = "'" + v
		}
		dst = append(dst, v)
	}
	return dst
}

// attachment is a Content-Disposition naming the file: an ASCII filename for every client
// (characters outside printable ASCII, quotes, backslashes and path separators become "_") and,
// when the name is not plain ASCII, the exact name as an RFC 5987 filename*.
func attachment(name string) string {
	var ascii strings.Builder
	plain := true
	for _, r := range name {
		switch {
		case r == '"' || r == '\\' || r == '/' || r < 0x20 || r == 0x7f:
			ascii.WriteByte('_')
			plain = false
		case r > 0x7e:
			ascii.WriteByte('_')
			plain = false
		default:
			ascii.WriteRune(r)
		}
	}
	out := `attachment; filename="` + ascii.String() + `"`
	if !plain {
		out += "; filename*=UTF-8''" + rfc5987(strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
				return '_'
			}
			return r
		}, name))
	}
	return out
}

// rfc5987 percent-encodes s as an RFC 5987 ext-value's value-chars (attr-char kept).
func rfc5987(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("!#$&+-.^_`|~", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", ch)
	}
	return b.String()
}
