package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// abLine is one figure of an A/B run (test/load/ab.sh): a result line tagged with its side
// (base or head) and pair.
type abLine struct {
	Side  string  `json:"side"`
	Pair  int     `json:"pair"`
	Form  string  `json:"form"`
	Mode  string  `json:"mode"`
	DB    string  `json:"db"`
	Token *bool   `json:"render_token"`
	RPS   float64 `json:"rps"`
	P99   float64 `json:"p99_ms"`
	Plain float64 `json:"plain_rps"`
}

// summarizeAB prints, per form, database and mode, each pair's base and head figures and the
// median change of acknowledged/s and of p99 over the pairs.
func summarizeAB(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type key struct{ form, db, mode string }
	type pair struct{ base, head *abLine }
	groups := map[key]map[int]*pair{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l abLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Side == "" {
			continue
		}
		mode := l.Mode
		if l.Token != nil && !*l.Token {
			mode += "-notoken"
		}
		k := key{l.Form, l.DB, mode}
		if groups[k] == nil {
			groups[k] = map[int]*pair{}
		}
		p := groups[k][l.Pair]
		if p == nil {
			p = &pair{}
			groups[k][l.Pair] = p
		}
		if l.Side == "base" {
			p.base = &l
		} else {
			p.head = &l
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j])
	})
	for _, k := range keys {
		fmt.Printf("== %s form, %s, %s\n", k.form, k.db, k.mode)
		fmt.Println("pair | base /s | head /s | change | base p99 ms | head p99 ms | head of plain")
		var rps, p99 []float64
		nums := make([]int, 0, len(groups[k]))
		for n := range groups[k] {
			nums = append(nums, n)
		}
		sort.Ints(nums)
		for _, n := range nums {
			p := groups[k][n]
			if p.base == nil || p.head == nil {
				continue
			}
			change := p.head.RPS/p.base.RPS - 1
			rps = append(rps, change)
			p99 = append(p99, p.head.P99/p.base.P99-1)
			ofPlain := "-"
			if p.head.Plain > 0 {
				ofPlain = fmt.Sprintf("%.3f", p.head.RPS/p.head.Plain)
			}
			fmt.Printf("%d | %.1f | %.1f | %+.1f%% | %.2f | %.2f | %s\n", n, p.base.RPS, p.head.RPS, 100*change, p.base.P99, p.head.P99, ofPlain)
		}
		if len(rps) > 0 {
			fmt.Printf("median change over %d pairs: acknowledged/s %+.1f%%, p99 %+.1f%%\n\n", len(rps), 100*median(rps), 100*median(p99))
		}
	}
	return nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
