#!/usr/bin/env bash
# Model-checks the round protocol (round_protocol.pml) with spin: every property for W = 2 and 3,
# then the negative controls, which must fail. Prints a table and exits non-zero on any unexpected
# result; a counterexample is replayed (spin -t) into a readable trace.
#
# Usage: model/check.sh            the CI bounds (each check well under 10 s)
#        model/check.sh long       larger scenarios and two faults (minutes; results in README.md)
#        model/check.sh derive S   prints the model's outcomes of scenario S (scenarios.txt columns)
# Generated files (pan.c, binaries, trails) stay in a temporary directory; ODBATCH_MODEL_KEEP=1
# keeps it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scenarios="$here/scenarios.txt"
mode=${1:-ci}
work=$(mktemp -d "${TMPDIR:-/tmp}/odbatch-model.XXXXXX")
if [ "${ODBATCH_MODEL_KEEP:-0}" = 1 ]; then
  echo "model: work directory $work"
else
  trap 'rm -rf "$work"' EXIT
fi
for tool in spin gcc awk; do
  command -v "$tool" >/dev/null || { echo "model: $tool not found (tools/install-deps.sh)" >&2; exit 2; }
done

# Writes scenario NAME of scenarios.txt as Promela (defines, and load_scenario filling the tables).
scenario_pml() {
  awk -v name="$1" '
    function fail(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; bad = 1; exit 2 }
    /^[[:space:]]*(#|$)/ { next }
    $1 != name { next }
    {
      found = 1
      if (NF != 8) fail("scenario " name ": expected 8 fields, found " NF)
      budget = $2; window = $3; defer = $4; hold = $5
      if (budget < 1 || window < 1 || defer < 0 || hold < 1 || hold > 100)
        fail("scenario " name ": budget, window, max_defer or hold_pct out of range")
      w = split($6, shards, "/")
      rounds = split($7, steps, ",")
      if (split($8, deferred, ",") != rounds)
        fail("scenario " name ": " rounds " step counts but a different number of deferred counts")
      printf "#define W %d\n#define WIN %d\n#define D %d\n#define B %d\n#define HOLD %d\n", w, window, defer, budget, hold
      body = ""; n = 0
      for (r = 1; r <= w; ++r) {
        count = shards[r] == "-" ? 0 : split(shards[r], costs, ",")
        body = body sprintf("  shard_first[%d] = %d; shard_len[%d] = %d;\n", r - 1, n, r - 1, count)
        for (i = 1; i <= count; ++i) {
          if (costs[i] !~ /^[0-9]+$/ || costs[i] < 1 || costs[i] > budget)
            fail("scenario " name ": rank " r - 1 " cost \"" costs[i] "\" is not within 1.." budget)
          body = body sprintf("  cost[%d] = %d;\n", n++, costs[i])
        }
      }
      if (n < 1 || n > 30) fail("scenario " name ": " n " samples (the model takes 1..30)")
      total = 0
      for (k = 1; k <= rounds; ++k) {
        body = body sprintf("  expected_T[%d] = %d; expected_deferred[%d] = %d;\n", k - 1, steps[k], k - 1, deferred[k])
        total += steps[k]
      }
      printf "#define N %d\n#define ROUNDS %d\n#define EXPECTED_STEPS %d\n", n, rounds, total
      printf "inline load_scenario() {\n%s}\n", body
    }
    END {
      if (bad) exit 2
      if (!found) { printf "%s: no scenario named %s\n", FILENAME, name > "/dev/stderr"; exit 2 }
    }
  ' "$scenarios"
}

if [ "$mode" = derive ]; then
  name=${2:?usage: model/check.sh derive SCENARIO}
  dir="$work/derive"
  mkdir -p "$dir"
  cp "$here/round_protocol.pml" "$dir/"
  scenario_pml "$name" >"$dir/scenario.pml"
  (cd "$dir" && spin -DDERIVE -T -B round_protocol.pml) >"$dir/simulation.log" 2>&1 || true
  awk '
    $1 == "MODEL" && $2 == "round" { t = t sep $5; d = d sep $7; sep = ","; over = $9 }
    END {
      if (over != 1) exit 1
      print "steps per round:    " t
      print "deferred per round: " d
    }' "$dir/simulation.log" || { cat "$dir/simulation.log" >&2; exit 2; }
  exit 0
fi

# Builds (once per configuration) the verifier of scenario/faults/variant; prints its directory.
verifier() {
  local scenario=$1 faults=$2 variant=$3 kind=$4
  local key="$scenario-f$faults-v$variant-d$depart-$kind"
  local dir="$work/$key"
  if [ ! -x "$dir/pan" ]; then
    mkdir -p "$dir"
    cp "$here/round_protocol.pml" "$dir/"
    scenario_pml "$scenario" >"$dir/scenario.pml"
    local defines="-DMAX_FAULTS=$faults -DVARIANT=$variant -DDEPART=$depart"
    echo "$defines" >"$dir/defines"
    # Fault runs are the large ones: optimise those; the others compile faster than they run.
    local cflags=(-O0 -w "${compression[@]}")
    [ "$faults" != 0 ] && cflags[0]=-O1
    case "$kind" in
      safety) cflags+=(-DSAFETY -DNOCLAIM) ;;
      cycles) cflags+=(-DNP -DNOCLAIM) ;;
      ltl) cflags+=(-DNFAIR=4) ;;
    esac
    if ! (cd "$dir" && spin -a $defines round_protocol.pml >spin.log 2>&1 &&
          gcc "${cflags[@]}" -o pan pan.c >gcc.log 2>&1); then
      echo "model: building the verifier for $key failed:" >&2
      cat "$dir/spin.log" "$dir/gcc.log" >&2
      exit 2
    fi
  fi
  echo "$dir"
}

# Replays the trail in DIR into a readable trace: the model's events (the last LAST of them, all
# when 0), the violation, and every process that ended blocked where it may not.
replay() {
  local dir=$1 last=$2
  (cd "$dir" && spin -t -T $(cat defines) round_protocol.pml 2>&1) | awk -v last="$last" '
    FILENAME != "-" { source[FNR] = $0; next }
    $1 == "MODEL" { $1 = ""; events[++n] = substr($0, 2); next }
    /^spin: .*(assertion|violated)|^spin: text of failed/ { problems = problems "    " $0 "\n"; next }
    /^spin: trail ends/ { steps = $0; next }
    /^[[:space:]]*[0-9]+:[[:space:]]+proc / && !/valid end state/ && $3 ~ /^[0-9]+$/ {
      role = $4; sub(/^\(/, "", role); sub(/:.*/, "", role)
      where = $5; sub(/.*:/, "", where)
      text = source[where]
      if (text ~ /^[[:space:]]*(if|do)[[:space:]]*$/) text = source[where + 1]
      if (text ~ /\{[[:space:]]*$/) { guard = source[where + 1]; sub(/^[[:space:]]+/, " ", guard); text = text guard }
      sub(/^[[:space:]]+/, "", text)
      rank = int(($3 - 1) / 2)
      blocked = blocked sprintf("    blocked: %s of rank %d at line %d: %s\n", role, rank, where, text)
    }
    END {
      first = last > 0 && n > last ? n - last + 1 : 1
      if (first > 1) print "    ... " first - 1 " earlier events"
      for (i = first; i <= n; ++i) print "    " events[i]
      printf "%s%s", problems, blocked
      if (steps != "") print "    (" steps ")"
    }' "$dir/round_protocol.pml" -
}

printf "%-15s %-2s %-26s %10s %7s  %s\n" property W configuration states time result
unexpected=0
depart=0  # DEPART of the model: 0, or the steps after which every trainer departs
# check PROPERTY SCENARIO FAULTS VARIANT CLAIM FAIR EXPECT
#   CLAIM: an ltl name of the model, safety (invalid end states and assertions) or cycles (any
#   cycle in the state graph); FAIR: -f for weak fairness, or -; EXPECT: pass, or the error.
check() {
  local property=$1 scenario=$2 faults=$3 variant=$4 claim=$5 fair=$6 expect=$7
  local kind=ltl run=(-a -N "$claim")
  case "$claim" in
    safety) kind=safety run=() ;;
    cycles) kind=cycles run=(-l) ;;
  esac
  [ "$fair" = -f ] && run+=(-f)
  local dir
  dir=$(verifier "$scenario" "$faults" "$variant" "$kind")
  rm -f "$dir"/*.trail
  local start end out
  start=$(date +%s.%N)
  out=$(cd "$dir" && ./pan -m100000 -w"$hash_bits" "${run[@]}" 2>&1) || true
  end=$(date +%s.%N)
  local states errors failure result
  states=$(awk '/states, stored/ { print $1; exit }' <<<"$out")
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' <<<"$out" | head -n1)
  failure=$(sed -n 's/^pan:1: \(.*\) (at depth.*/\1/p' <<<"$out" | head -n1)
  # A violated safety claim shows as an assertion on the negated formula: !( !(...
  [ "$kind" = ltl ] && [[ $failure =~ ^"assertion violated"\ +"!( !(" ]] && failure="claim $claim violated"
  # A violated liveness claim shows as an acceptance cycle.
  [ "$kind" = ltl ] && [ "$failure" = "acceptance cycle" ] &&
    failure="claim $claim violated (acceptance cycle)"
  if [ -z "$errors" ] || grep -q "out of memory\|max search depth too small" <<<"$out"; then
    result="UNEXPECTED: incomplete search"
  elif [ "$expect" = pass ] && [ "$errors" = 0 ]; then
    result=pass
  elif [ "$expect" != pass ] && [ "$errors" != 0 ] && grep -q "$expect" <<<"$failure"; then
    result="fails as it must: $failure"
  elif [ "$errors" = 0 ]; then
    result="UNEXPECTED: passed, expected $expect"
  else
    result="UNEXPECTED: $failure"
  fi
  local config="$scenario"
  [ "$faults" != 0 ] && config+=" faults=$faults"
  [ "$variant" != 0 ] && config+=" variant=$variant"
  [ "$depart" != 0 ] && config+=" depart=$depart"
  local w
  w=$(sed -n 's/^#define W \([0-9]*\)/\1/p' "$dir/scenario.pml")
  printf "%-15s %-2s %-26s %10s %6.2fs  %s\n" "$property" "$w" "$config" "${states:-?}" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$result"
  if [ "$result" != pass ]; then
    if ls "$dir"/*.trail >/dev/null 2>&1; then
      if [[ $result == UNEXPECTED* ]]; then replay "$dir" 0; else replay "$dir" 8; fi
    elif [[ $result == UNEXPECTED* ]]; then
      echo "$out" | sed 's/^/    /'
    fi
  fi
  [[ $result == UNEXPECTED* ]] && unexpected=$((unexpected + 1))
  return 0
}

# Every property of one scenario: fault-free, then (unless FAULTS is 0) with up to FAULTS crashes
# or stalls. The safety run (deadlock+assert) also checks every assertion of the model.
properties() {
  local scenario=$1 faults=$2
  check deadlock+assert "$scenario" 0 0 safety - pass
  check termination "$scenario" 0 0 termination -f pass
  check equal_steps "$scenario" 0 0 equal_steps - pass
  check coverage "$scenario" 0 0 coverage - pass
  [ "$faults" = 0 ] && return 0
  check deadlock+assert "$scenario" "$faults" 0 safety - pass
  check abort_on_fault "$scenario" "$faults" 0 abort_on_fault -f pass
  check no_hang "$scenario" "$faults" 0 no_hang -f pass
  check acyclic "$scenario" "$faults" 0 cycles - pass
}

# Every trainer departs after DEPART steps (Pipeline::depart): every rank ends DEPARTED having
# taken exactly those steps, nothing deadlocks, and a fault before every rank departed aborts the
# survivors.
departures() {
  local scenario=$1 steps=$2 faults=$3
  depart=$steps check deadlock+assert "$scenario" 0 0 safety - pass
  depart=$steps check departure "$scenario" 0 0 departure -f pass
  depart=$steps check deadlock+assert "$scenario" "$faults" 0 safety - pass
  depart=$steps check abort_on_fault "$scenario" "$faults" 0 abort_on_fault -f pass
  depart=$steps check no_hang "$scenario" "$faults" 0 no_hang -f pass
  depart=$steps check leaves_at_once "$scenario" 0 4 departure -f "claim departure violated"
}

# Negative controls: each must fail the check that catches its hazard.
negative_controls() {
  check done_skips "$1" 0 1 safety - "invalid end state"
  check leaves_early "$1" 0 2 coverage - "claim coverage violated"
  check root_holds "$1" 0 3 safety - "invalid end state"
}

case "$mode" in
  ci)
    hash_bits=22 compression=()
    properties w2_mixed 1
    properties w3_mixed 1
    departures w2_mixed 2 1
    departures w3_mixed 4 1
    negative_controls w2_mixed
    negative_controls w3_mixed
    ;;
  long)
    hash_bits=26 compression=(-DCOLLAPSE)
    properties w2_long 2
    properties w3_long 2
    properties w4_long 1
    departures w3_long 5 2
    negative_controls w2_long
    negative_controls w3_long
    negative_controls w4_long
    ;;
  *)
    echo "usage: model/check.sh [long | derive SCENARIO]" >&2
    exit 2
    ;;
esac

if [ "$unexpected" -ne 0 ]; then
  echo "model: $unexpected unexpected result(s)"
  exit 1
fi
echo "model: every result as expected"
