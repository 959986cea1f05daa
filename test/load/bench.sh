#!/usr/bin/env bash
# Load benchmark of the capture path: API POST /forms/{id}/submissions on one 10-field form,
# 64 connections from a second process on loopback, on SQLite and on PostgreSQL; and, with
# BENCH_MODES, the public page (GET /f/{id}) and its urlencoded capture (POST /f/{id}).
#
#   make bench                                   # both databases, 64 connections, 10 s each
#   BENCH_DBS=sqlite BENCH_DURATION=30s make bench
#   make bench-public                            # SQLite: api, then page, then capture
#
# Knobs: BENCH_FORM (single, the default: one page of 10 fields; multipage: the same 10 fields
# on 3 pages with two show_if rules, one of which skips page 3 for "Student" tickets;
# respondent: multipage with scores, a recalled answer, a German translation and save and
# resume),
# BENCH_DBS (default "sqlite postgres"), BENCH_MODES (default "api"; any of api, page,
# capture (urlencoded, with the page's render token as a browser posts it), capture-notoken
# (the same without the token, which these relaxed settings allow), step (Next from page 1 of a
# multi-page form, POST /f/{id}/page: a page move, which saves a draft when the form keeps
# them), run in the order given
# against the same server and form), BENCH_CONNECTIONS (64), BENCH_DURATION (10s),
# BENCH_WARMUP (2s), BENCH_LOG_LEVEL (info, the default of a real deployment),
# BENCH_RETENTION (0; N > 0 stores N submissions received 13 months ago in a Starter workspace
# before serve starts, so that serve's first retention pass, paced as always, deletes them
# while the load runs: capture under the retention job; how many it deleted during each load
# run, and at what rate, is printed; take enough that the pass outlasts the load, or the rate
# printed is too low and the script warns: 400000 where it deletes 20,000/s),
# BENCH_BACKFILL (0; N > 0 stores N submissions of the last hour in a form of their own before
# serve starts, and runs `formward events backfill` of that form to a Kafka-protocol broker in a
# process of its own, test/load/broker, during each load run: capture during a backfill; how many
# snapshots it published meanwhile is printed; take enough that it outlasts the load),
# BENCH_STORED (0; N > 0 stores N submissions of the last hour, spread over BENCH_STORED_FORMS
# forms (10000) of a workspace of their own, before serve starts: capture with a full database,
# to compare with the empty one; the line then carries "stored": N),
# BENCH_BACKFILL_RATE (the backfill's --rate: 1000, its default; 0 for no limit),
# BENCH_POSTGRES_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable),
# BENCH_PLAIN (1: after each Formward figure, the same load against a plain net/http server that
# answers the bytes Formward answered, test/load/plain; its figures go beside Formward's in the
# line: plain_rps, plain_p99_ms, of_plain; 0 skips it), BENCH_BASE (a git ref: run this script
# alternately on that ref and on the working tree, BENCH_PAIRS times (3), and print the pairs
# and the median change per figure: test/load/ab.sh), BENCH_PROFILE (a directory: serve listens
# for pprof on a loopback port of its own and, during each measured load, a CPU profile of the
# server is written there as cpu-<db>-<mode>.pprof, with its top functions printed),
# BENCH_ACCEPT_ENCODING (empty: the page mode asks for no compression; gzip: its requests send
# Accept-Encoding: gzip as a browser does, and the plain server answers the same gzip bytes).
set -euo pipefail

cd "$(dirname "$0")/../.."
if [ -n "${BENCH_BASE:-}" ]; then
  exec bash test/load/ab.sh
fi
GO=${GO:-go}
DBS=${BENCH_DBS:-sqlite postgres}
MODES=${BENCH_MODES:-api}
PUBLIC=""
for mode in $MODES; do
  case "$mode" in
    api) ;;
    page | capture | capture-notoken | step) PUBLIC=1 ;;
    *) echo "unknown mode $mode (want api, page, capture, capture-notoken or step)" >&2; exit 2 ;;
  esac
done
CONNECTIONS=${BENCH_CONNECTIONS:-64}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
LOG_LEVEL=${BENCH_LOG_LEVEL:-info}
PG_ADMIN_URL=${BENCH_POSTGRES_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
PG_DB=formward_bench
FORM_SHAPE=${BENCH_FORM:-single}
RETENTION=${BENCH_RETENTION:-0}
BACKFILL=${BENCH_BACKFILL:-0}
BACKFILL_RATE=${BENCH_BACKFILL_RATE:-1000}
STORED=${BENCH_STORED:-0}
STORED_FORMS=${BENCH_STORED_FORMS:-10000}
PLAIN=${BENCH_PLAIN:-1}
PROFILE=${BENCH_PROFILE:-}
ACCEPT_ENCODING=${BENCH_ACCEPT_ENCODING:-}
if [ -n "$PROFILE" ]; then mkdir -p "$PROFILE"; PROFILE=$(cd "$PROFILE" && pwd); fi

# form_fields prints the benchmark form's fields: the same ten either way; multipage spreads them
# over three pages with display rules (evaluated by the server on every post and page view).
form_fields() {
  case "$FORM_SHAPE" in
    single)
      cat <<'JSON'
[
  {"label": "Full name", "type": "text", "required": true},
  {"label": "Email", "type": "email", "required": true},
  {"label": "Age", "type": "number"},
  {"label": "Ticket", "type": "dropdown", "required": true, "options": ["Standard", "Student", "VIP"]},
  {"label": "Sessions", "type": "checkbox", "options": ["Keynote", "Workshops", "Dinner"]},
  {"label": "Diet", "type": "radio", "options": ["None", "Vegetarian", "Vegan"]},
  {"label": "Comments", "type": "textarea"},
  {"label": "Arrival date", "type": "date"},
  {"label": "Company", "type": "text"},
  {"label": "Team size", "type": "number"}
]
JSON
      ;;
    multipage)
      cat <<'JSON'
[
  {"label": "Full name", "type": "text", "required": true, "page": 1},
  {"label": "Email", "type": "email", "required": true, "page": 1},
  {"label": "Age", "type": "number", "page": 1},
  {"label": "Ticket", "type": "dropdown", "required": true, "options": ["Standard", "Student", "VIP"], "page": 1},
  {"label": "Sessions", "type": "checkbox", "options": ["Keynote", "Workshops", "Dinner"], "page": 2},
  {"label": "Diet", "type": "radio", "options": ["None", "Vegetarian", "Vegan"], "page": 2,
   "show_if": {"match": "all", "conditions": [{"field_id": "sessions", "operator": "contains", "value": "Dinner"}]}},
  {"label": "Comments", "type": "textarea", "page": 2},
  {"label": "Arrival date", "type": "date", "page": 3,
   "show_if": {"match": "any", "conditions": [{"field_id": "ticket", "operator": "not_equals", "value": "Student"}]}},
  {"label": "Company", "type": "text", "page": 3,
   "show_if": {"match": "any", "conditions": [{"field_id": "ticket", "operator": "not_equals", "value": "Student"}]}},
  {"label": "Team size", "type": "number", "page": 3,
   "show_if": {"match": "any", "conditions": [{"field_id": "ticket", "operator": "not_equals", "value": "Student"}]}}
]
JSON
      ;;
    respondent)
      # multipage, with what respondents ask for on top: scores on the ticket (a quiz-style
      # sum), the name recalled in page 2's label and the thank-you message, a German
      # translation of every label, and save and resume (form_settings below).
      cat <<'JSON'
[
  {"label": "Full name", "type": "text", "required": true, "page": 1, "translations": {"de": {"label": "Vollständiger Name"}}},
  {"label": "Email", "type": "email", "required": true, "page": 1, "translations": {"de": {"label": "E-Mail"}}},
  {"label": "Age", "type": "number", "page": 1, "translations": {"de": {"label": "Alter"}}},
  {"label": "Ticket", "type": "dropdown", "required": true, "options": ["Standard", "Student", "VIP"], "scores": [1, 0, 3], "page": 1,
   "translations": {"de": {"label": "Ticket", "options": ["Standard", "Studierende", "VIP"]}}},
  {"label": "Sessions for {{full_name}}", "key": "sessions", "type": "checkbox", "options": ["Keynote", "Workshops", "Dinner"], "scores": [1, 2, 1], "page": 2,
   "translations": {"de": {"label": "Sitzungen für {{full_name}}", "options": ["Keynote", "Workshops", "Abendessen"]}}},
  {"label": "Diet", "type": "radio", "options": ["None", "Vegetarian", "Vegan"], "page": 2,
   "show_if": {"match": "all", "conditions": [{"field_id": "sessions", "operator": "contains", "value": "Dinner"}]},
   "translations": {"de": {"label": "Ernährung", "options": ["Keine", "Vegetarisch", "Vegan"]}}},
  {"label": "Comments", "type": "textarea", "page": 2, "translations": {"de": {"label": "Anmerkungen"}}},
  {"label": "Arrival date", "type": "date", "page": 3,
   "show_if": {"match": "any", "conditions": [{"field_id": "ticket", "operator": "not_equals", "value": "Student"}]},
   "translations": {"de": {"label": "Anreisedatum"}}},
  {"label": "Company", "type": "text", "page": 3,
   "show_if": {"match": "any", "conditions": [{"field_id": "ticket", "operator": "not_equals", "value": "Student"}]},
   "translations": {"de": {"label": "Firma"}}},
  {"label": "Team size", "type": "number", "page": 3,
   "show_if": {"match": "any", "conditions": [{"field_id": "ticket", "operator": "not_equals", "value": "Student"}]},
   "translations": {"de": {"label": "Teamgröße"}}}
]
JSON
      ;;
    *) echo "unknown BENCH_FORM $FORM_SHAPE (want single, multipage or respondent)" >&2; exit 2 ;;
  esac
}

# partial_setting keeps save and resume (and the thank-you message) on when the public modes
# relax the spam settings (a PATCH replaces the settings whole).
partial_setting() {
  case "$FORM_SHAPE" in
    respondent) printf '%s' ', "thank_you_message": "Thanks {{full_name}}, your score is {{score}}.", "partial": {"enabled": true, "ttl_days": 30}' ;;
    *) ;;
  esac
}

# form_settings prints what the form's shape adds to its settings (respondent: languages, save
# and resume, a thank-you message with the score and a recalled answer).
form_settings() {
  case "$FORM_SHAPE" in
    respondent) printf '%s' ', "languages": ["en", "de"], "settings": {"thank_you_message": "Thanks {{full_name}}, your score is {{score}}.", "partial": {"enabled": true, "ttl_days": 30}}' ;;
    *) ;;
  esac
}

echo "== building bin/formward, bin/formward-load and bin/formward-plain"
make --no-print-directory build GO="$GO"
"$GO" build -o bin/formward-load ./test/load
"$GO" build -o bin/formward-plain ./test/load/plain
if [ "$RETENTION" -gt 0 ] || [ "$BACKFILL" -gt 0 ] || [ "$STORED" -gt 0 ]; then "$GO" build -o bin/formward-seedexpired ./test/load/seedexpired; fi
if [ "$BACKFILL" -gt 0 ]; then "$GO" build -o bin/formward-broker ./test/load/broker; fi

WORK=$(mktemp -d -t formward-bench-XXXXXX)
RESULTS="$WORK/results.jsonl"
: >"$RESULTS"
SERVE_PID=""
BROKER_PID=""

cleanup() {
  if [ -n "$BROKER_PID" ]; then kill -TERM "$BROKER_PID" 2>/dev/null || true; fi
  if [ -n "$SERVE_PID" ] && kill -0 "$SERVE_PID" 2>/dev/null; then
    kill -TERM "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { # a random unused loopback port, away from the usual 8080-style ones
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free loopback port found" >&2
  return 1
}

# plain_run REC LOAD-ARGS...: starts the plain server on the responses recorded in REC, runs
# formward-load against it with LOAD-ARGS, stops it, and prints the load's JSON line.
plain_run() {
  local rec=$1 addr="" pid out
  shift
  rm -f "$rec.addr"
  ./bin/formward-plain -addr 127.0.0.1:0 -addr-file "$rec.addr" -dir "$rec" >"bin/bench-plain.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if [ -s "$rec.addr" ]; then addr=$(cat "$rec.addr"); break; fi
    sleep 0.05
  done
  if [ -z "$addr" ]; then echo "the plain server did not start:" >&2; cat "bin/bench-plain.log" >&2; exit 1; fi
  out=$(./bin/formward-load "$@" -url "http://$addr/v1" -key plain 2>>"bin/bench-plain.log") || {
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    echo "the load against the plain server failed:" >&2; tail -n 20 "bin/bench-plain.log" >&2; exit 1
  }
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "$out"
}

# with_plain FORMWARD-LINE PLAIN-LINE: Formward's JSON line with the plain server's figures
# beside it: plain_rps, plain_p99_ms and of_plain (Formward's rps as a share of the plain one).
with_plain() {
  local fw=$1 pl=$2 prps pp99 share
  prps=$(printf '%s' "$pl" | grep -o '"rps":[0-9.]*' | head -n 1 | cut -d: -f2)
  pp99=$(printf '%s' "$pl" | grep -o '"p99_ms":[0-9.]*' | head -n 1 | cut -d: -f2)
  share=$(printf '%s' "$fw" | grep -o '"rps":[0-9.]*' | head -n 1 | cut -d: -f2 | awk -v p="$prps" '{ if (p > 0) printf "%.3f", $1 / p; else print 0 }')
  printf '%s,"plain_rps":%s,"plain_p99_ms":%s,"of_plain":%s}\n' "${fw%\}}" "${prps:-0}" "${pp99:-0}" "$share"
}

pg() { PGOPTIONS="-c client_min_messages=warning" psql "$@"; } # quiet: no NOTICE for "does not exist"

pg_url_for() { # the admin URL with its database name replaced
  local db=$1 rest=${PG_ADMIN_URL#*://}
  local scheme=${PG_ADMIN_URL%%://*} hostpart=${rest%%/*} query=""
  case "$rest" in *\?*) query="?${rest#*\?}" ;; esac
  echo "$scheme://$hostpart/$db$query"
}

echo "== machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB memory"
echo "== FORMWARD_API_RATE_LIMIT=0: the per-key API rate limit (default 100/s, burst 200) is off,"
echo "   otherwise it would cap this benchmark at about 100 submissions/s."
if [ -n "$PUBLIC" ]; then
  echo "== public page modes ($MODES): FORMWARD_FORM_RATE_LIMIT=0, the per-IP-hash limit of the public"
  echo "   capture is off (every request comes from 127.0.0.1); the form is published and its spam"
  echo "   settings relaxed for the run: proof_of_work off, min_fill_seconds 0 (the honeypot stays on,"
  echo "   left empty). capture: each post carries the render token of a page fetched for it before"
  echo "   the measured window (a token is spent once); capture-notoken: the same post without it."
fi

for db in $DBS; do
  echo
  echo "== $db"
  data_dir="$WORK/data-$db"
  mkdir -p "$data_dir"
  port=$(free_port)
  export FORMWARD_DATA_DIR="$data_dir"
  export FORMWARD_INIT=1 # a fresh data dir: let keys create / migrate start it
  export FORMWARD_HTTP_ADDR="127.0.0.1:$port"
  export FORMWARD_API_RATE_LIMIT=0
  if [ -n "$PUBLIC" ]; then export FORMWARD_FORM_RATE_LIMIT=0; fi
  export FORMWARD_LOG_LEVEL="$LOG_LEVEL"
  FORMWARD_MASTER_KEY=$(head -c 32 /dev/urandom | base64)
  export FORMWARD_MASTER_KEY
  unset FORMWARD_DATABASE_URL
  if [ -n "$PROFILE" ]; then export FORMWARD_DEBUG_ADDR="127.0.0.1:$(free_port)"; fi

  case "$db" in
    sqlite) ;;
    postgres)
      if ! pg "$PG_ADMIN_URL" -tAc 'select 1' >/dev/null 2>&1; then
        echo "PostgreSQL is not reachable at $PG_ADMIN_URL; skipping (set BENCH_POSTGRES_ADMIN_URL)" >&2
        continue
      fi
      pg "$PG_ADMIN_URL" -v ON_ERROR_STOP=1 -qc "drop database if exists $PG_DB with (force)"
      pg "$PG_ADMIN_URL" -v ON_ERROR_STOP=1 -qc "create database $PG_DB"
      export FORMWARD_DATABASE_URL
      FORMWARD_DATABASE_URL=$(pg_url_for "$PG_DB")
      echo "PostgreSQL $(pg "$FORMWARD_DATABASE_URL" -tAc 'show server_version'), synchronous_commit=$(pg "$FORMWARD_DATABASE_URL" -tAc 'show synchronous_commit'), fsync=$(pg "$FORMWARD_DATABASE_URL" -tAc 'show fsync')"
      ./bin/formward migrate
      ;;
    *)
      echo "unknown database $db (want sqlite or postgres)" >&2
      exit 2
      ;;
  esac

  key=$(./bin/formward keys create --name bench --scope admin)
  if [ "$RETENTION" -gt 0 ]; then
    ./bin/formward-seedexpired -n "$RETENTION"
    # serve takes its first scheduled backup at start when there is none; with the seeded
    # rows it would run during the load too and blur what the retention job costs.
    export FORMWARD_BACKUP_INTERVAL=0
  fi

  if [ "$BACKFILL" -gt 0 ]; then
    backfill_form=$(./bin/formward-seedexpired -recent -n "$BACKFILL" | tee /dev/stderr | awk '/^form / {print $2}')
    ./bin/formward-broker >"$WORK/broker.out" 2>&1 &
    BROKER_PID=$!
    for _ in $(seq 1 50); do grep -q '^listening' "$WORK/broker.out" && break; sleep 0.1; done
    broker=$(awk '/^listening/ {print $2}' "$WORK/broker.out")
    if [ -z "$broker" ]; then echo "the broker did not start:" >&2; cat "$WORK/broker.out" >&2; exit 1; fi
    export FORMWARD_BACKUP_INTERVAL=0 # as with BENCH_RETENTION: no first backup of the seeded rows during the load
  fi

  if [ "$STORED" -gt 0 ]; then
    ./bin/formward-seedexpired -recent -n "$STORED" -forms "$STORED_FORMS" | sed -n 1p
    export FORMWARD_BACKUP_INTERVAL=0 # as with BENCH_RETENTION: no first backup of the seeded rows during the load
  fi

  ./bin/formward serve >"bin/bench-$db-serve.log" 2>&1 &
  SERVE_PID=$!
  ready=""
  for _ in $(seq 1 100); do
    if curl -fsS "http://$FORMWARD_HTTP_ADDR/readyz" >/dev/null 2>&1; then ready=1; break; fi
    if ! kill -0 "$SERVE_PID" 2>/dev/null; then break; fi
    sleep 0.2
  done
  if [ -z "$ready" ]; then
    echo "formward serve did not become ready; its output:" >&2
    cat "bin/bench-$db-serve.log" >&2
    exit 1
  fi

  form=$(curl -fsS -X POST "http://$FORMWARD_HTTP_ADDR/v1/forms" \
    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d '{
      "name": "Benchmark: event registration",
      "fields": '"$(form_fields)"''"$(form_settings)"'
    }')
  form_id=$(printf '%s' "$form" | grep -o 'frm_[A-Za-z0-9_-]*' | head -n 1)
  if [ -z "$form_id" ]; then
    echo "could not create the benchmark form: $form" >&2
    exit 1
  fi
  if [ -n "$PUBLIC" ]; then
    curl -fsS -X PATCH "http://$FORMWARD_HTTP_ADDR/v1/forms/$form_id" \
      -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d '{"status": "published", "settings": {"spam": {"honeypot": true, "min_fill_seconds": 0, "proof_of_work": false}'"$(partial_setting)"'}}' >/dev/null
    echo "form $form_id published; settings.spam: honeypot on, min_fill_seconds 0, proof_of_work off"
  fi
  echo "form $form_id (10 fields, $FORM_SHAPE); load: $CONNECTIONS connections, $DURATION after $WARMUP warm-up"

  for mode in $MODES; do
    echo "-- $db: $mode (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
    args=(-mode "$mode")
    if [ "$mode" = capture-notoken ]; then args=(-mode capture -no-token); fi
    if [ "$mode" = step ]; then args=(-mode capture -step); fi
    if [ "$mode" = page ] && [ -n "$ACCEPT_ENCODING" ]; then args+=(-accept-encoding "$ACCEPT_ENCODING"); fi
    if [ "$RETENTION" -gt 0 ]; then left_before=$(./bin/formward-seedexpired -remaining); t_before=$(date +%s.%N); fi
    rec="$WORK/recorded-$db-$mode"
    PROFILE_PID=""
    if [ -n "$PROFILE" ]; then
      # the profile covers the measured window: it starts after the warm-up and ends before the load does
      secs=$(printf '%s' "$DURATION" | sed 's/s$//')
      (sleep "$(printf '%s' "$WARMUP" | sed 's/s$//')" &&
        curl -fsS -o "$PROFILE/cpu-$db-$mode.pprof" "http://$FORMWARD_DEBUG_ADDR/debug/pprof/profile?seconds=$((secs > 1 ? secs - 1 : 1))") &
      PROFILE_PID=$!
    fi
    if [ "$BACKFILL" -gt 0 ]; then
      ./bin/formward events backfill --restart --form "$backfill_form" --kafka-brokers "$broker" --kafka-topic bench.backfill \
        --kafka-partitions 1 --rate "$BACKFILL_RATE" >"$WORK/backfill.out" 2>"$WORK/backfill.err" &
      BACKFILL_PID=$!
    fi
    if ! line=$(./bin/formward-load "${args[@]}" -record "$rec" -db "$db" -url "http://$FORMWARD_HTTP_ADDR/v1" -key "$key" -form "$form_id" \
      -c "$CONNECTIONS" -d "$DURATION" -warmup "$WARMUP" | sed "s/^{\"mode\"/{\"form\":\"$FORM_SHAPE\",\"mode\"/"); then
      echo "the load run failed; the end of the server's output:" >&2
      tail -n 50 "bin/bench-$db-serve.log" >&2
      exit 1
    fi
    if [ -n "$PROFILE_PID" ]; then
      wait "$PROFILE_PID" || echo "WARNING: no CPU profile of $db $mode" >&2
      "$GO" tool pprof -top -nodecount=25 bin/formward "$PROFILE/cpu-$db-$mode.pprof" 2>/dev/null | sed 's/^/profile: /' || true
    fi
    if [ "$BACKFILL" -gt 0 ]; then
      if kill -0 "$BACKFILL_PID" 2>/dev/null; then
        kill -TERM "$BACKFILL_PID" 2>/dev/null || true
      else
        echo "WARNING: the backfill ended before the load did (raise BENCH_BACKFILL):" >&2
        cat "$WORK/backfill.out" "$WORK/backfill.err" >&2
      fi
      wait "$BACKFILL_PID" 2>/dev/null || true
      published=$(grep -o 'published [0-9]* snapshots' "$WORK/backfill.err" | tail -n 1 | awk '{print $2}')
      echo "backfill during the load ($mode, --rate $BACKFILL_RATE): ${published:-0} snapshots published"
    fi
    if [ "$PLAIN" = 1 ]; then
      # The same load, right away, against a plain net/http server answering the bytes Formward
      # answered (test/load/plain): what the machine does with the same I/O and nothing else.
      plain_line=$(plain_run "$rec" "${args[@]}" -db "$db" -form "$form_id" -c "$CONNECTIONS" -d "$DURATION" -warmup "$WARMUP")
      line=$(with_plain "$line" "$plain_line")
    fi
    if [ "$STORED" -gt 0 ]; then line="${line%\}},\"stored\":$STORED}"; fi
    if [ "$BACKFILL" -gt 0 ]; then line="${line%\}},\"backfill_rate\":$BACKFILL_RATE,\"backfill_published\":${published:-0}}"; fi
    echo "$line" | tee -a "$RESULTS"
    if [ "$RETENTION" -gt 0 ]; then
      left_after=$(./bin/formward-seedexpired -remaining); t_after=$(date +%s.%N)
      awk -v m="$mode" -v b="$left_before" -v a="$left_after" -v t0="$t_before" -v t1="$t_after" 'BEGIN {
        printf "retention during the load (%s): %d expired submissions deleted in %.1f s, %.0f /s; %d left\n", m, b - a, t1 - t0, (b - a) / (t1 - t0), a }'
    fi
  done

  if [ "$RETENTION" -gt 0 ]; then
    if grep -q '"retention pass"' "bin/bench-$db-serve.log"; then
      echo "WARNING: the retention pass ended before the load did (raise BENCH_RETENTION):" >&2
      grep '"retention pass"' "bin/bench-$db-serve.log" >&2
    else
      echo "retention pass still running when the load ended (as intended)"
    fi
  fi

  if [ -n "$BROKER_PID" ]; then kill -TERM "$BROKER_PID" 2>/dev/null || true; wait "$BROKER_PID" 2>/dev/null || true; BROKER_PID=""; fi
  kill -TERM "$SERVE_PID"
  if ! wait "$SERVE_PID"; then
    echo "formward serve did not exit cleanly; its output:" >&2
    tail -n 50 "bin/bench-$db-serve.log" >&2
    SERVE_PID=""
    exit 1
  fi
  SERVE_PID=""

  if [ "$db" = postgres ]; then
    pg "$PG_ADMIN_URL" -qc "drop database if exists $PG_DB with (force)" || true
  fi
done

echo
echo "== results (one JSON line per database and mode; server logs in bin/bench-*-serve.log)"
cat "$RESULTS"
