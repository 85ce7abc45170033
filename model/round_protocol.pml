/*
 * The odbatch round protocol (docs/protocol.md) for W ranks: per rank a loader (packer, aligner,
 * coordinator and emitter as one process) and a trainer, the control plane's abort key, and
 * injected crash-stop and stall faults. model/README.md states the abstraction and the properties.
 *
 * The scenario (W, shards of abstract sample costs, budget, window, D, hold_pct, and the outcomes
 * the C++ core must also produce) comes from scenario.pml, which check.sh generates from
 * scenarios.txt. Options (-D):
 *   MAX_FAULTS  at most this many crashes or stalls per run (default 0)
 *   PREFETCH    batch queue slots (default 1)
 *   VARIANT     a negative control (default 0: the protocol as designed):
 *               1  a DONE rank skips the round's readiness and collective
 *               2  a rank leaves at its own end of data without draining its window
 *               3  rank 0 releases the round's plan to the others only after emitting its steps
 *               4  a departing rank's loader leaves at once instead of staying until every rank
 *                  has announced its departure
 *   DEPART      every trainer departs (Pipeline::depart) after this many steps (default 0: none)
 *   DERIVE      print the outcomes instead of asserting the table's (check.sh derive)
 */
#include "scenario.pml"

#ifndef MAX_FAULTS
#define MAX_FAULTS 0
#endif
#ifndef PREFETCH
#define PREFETCH 1
#endif
#ifndef VARIANT
#define VARIANT 0
#endif
#ifndef DEPART
#define DEPART 0
#endif

/* A window never holds more than (D+1) * window samples, and T never exceeds the largest window. */
#define MAXWIN ((D + 1) * WIN)
#define MAXT MAXWIN

#if W == 2
#define FORALL(P, a) (P(0, a) && P(1, a))
#define EXISTS(P, a) (P(0, a) || P(1, a))
#elif W == 3
#define FORALL(P, a) (P(0, a) && P(1, a) && P(2, a))
#define EXISTS(P, a) (P(0, a) || P(1, a) || P(2, a))
#elif W == 4
#define FORALL(P, a) (P(0, a) && P(1, a) && P(2, a) && P(3, a))
#define EXISTS(P, a) (P(0, a) || P(1, a) || P(2, a) || P(3, a))
#else
#error "the model supports W = 2, 3 or 4"
#endif

mtype = { ACTIVE, DRAINING, DONE };       /* rank state in a proposal */
mtype = { RUNNING, FINISHED, ABORTED, DEPARTED };   /* how a loader or trainer ended */
mtype = { BATCH, END };                   /* batch queue items; an IDLE batch has mask 0 */

/* Scenario constants: loaded once by init, never written again, so kept out of the state. */
hidden byte cost[N];          /* abstract cost (tokens) of sample id */
hidden byte shard_first[W];   /* rank r's shard: sample ids shard_first[r] .. + shard_len[r] - 1 */
hidden byte shard_len[W];
hidden byte expected_T[ROUNDS];
hidden byte expected_deferred[ROUNDS];

/* Rank windows: sample ids and ages in window order. */
typedef Window {
  byte id[MAXWIN];
  byte age[MAXWIN];
  byte count
};
Window win[W];
byte cursor[W];               /* next shard position */
mtype pstate[W];              /* state in the rank's current proposal */

/* Control plane (TCP store): readiness, finish barrier and abort key. */
byte ready[W];                /* round + 1 each rank last declared itself ready for */
bool finish[W];               /* trainer took end-of-epoch: the finish barrier's flags */
byte abort_key;               /* 0: none; r + 1: the first failure was rank r */
bool departed[W];             /* trainer announced its departure (departed/<rank>) */
bool left[W];                 /* VARIANT 4: the loader left (its heartbeats stopped) */

/* The loader's collective context: one allgather per round. */
byte gathered[W];             /* round + 1 of the last proposal each rank contributed */
byte planned;                 /* round + 1 of the last plan F computed */
byte released;                /* VARIANT 3: round + 1 of the last plan rank 0 handed out */
byte T;                       /* steps of the planned round */
bool epoch_over;
typedef Steps {
  int mask[MAXT]              /* sample ids of each step's group; 0: IDLE */
};
Steps plan[W];

/* Trainers: bounded batch queues and the per-step gradient collective. */
chan queue[W] = [PREFETCH] of { mtype, int };
byte steps_taken[W];          /* batches a trainer took; also the step its collective is at */
int covered;                  /* samples trainers received */
bool duplicated;              /* some sample was received twice */

mtype loader_end[W];
mtype trainer_end[W];

/* Faults. */
bool crashed[W];
bool stalled[W];
byte faults;
byte fault_rank;

#define READY_FOR(j, k) (ready[j] >= (k))
#define GATHERED_FOR(j, k) (gathered[j] >= (k))
#define AT_STEP(j, s) (steps_taken[j] >= (s))
#define FINISH_SET(j, unused) (finish[j])
#define IS_DONE(j, unused) (pstate[j] == DONE)
#define HAS_DEPARTED(j, unused) (departed[j])
#define ALL_DEPARTED FORALL(HAS_DEPARTED, 0)
/* A rank whose heartbeats stopped before every rank departed is a failed rank. */
#define IS_FAULTY(j, unused) (crashed[j] || stalled[j] || (left[j] && !ALL_DEPARTED))
#define RANK_FINISHED(j, unused) (loader_end[j] == FINISHED && trainer_end[j] == FINISHED)
#define RANK_ABORTED(j, unused) (crashed[j] || (loader_end[j] == ABORTED && trainer_end[j] == ABORTED))
#define RANK_DEPARTED(j, unused) \
  (loader_end[j] == DEPARTED && trainer_end[j] == DEPARTED && steps_taken[j] == DEPART)
#define ENDED(e) ((e) == FINISHED || (e) == ABORTED || (e) == DEPARTED)
#define RANK_SETTLED(j, unused) (crashed[j] || (ENDED(loader_end[j]) && ENDED(trainer_end[j])))
#define STEPS_AS_PLANNED(j, unused) (steps_taken[j] == EXPECTED_STEPS)

#define EPOCH_FINISHED FORALL(RANK_FINISHED, 0)
#define SURVIVORS_ABORTED FORALL(RANK_ABORTED, 0)
#define ALL_SAMPLES ((1 << N) - 1)

/* Liveness under weak fairness (pan -a -f); safety claims (pan -a). */
ltl termination { <> EPOCH_FINISHED }
ltl equal_steps { [] (EPOCH_FINISHED -> FORALL(STEPS_AS_PLANNED, 0)) }
ltl coverage { [] (EPOCH_FINISHED -> (covered == ALL_SAMPLES && !duplicated)) }
ltl abort_on_fault { [] ((faults > 0) -> <> SURVIVORS_ABORTED) }
ltl no_hang { <> FORALL(RANK_SETTLED, 0) }
ltl departure { <> FORALL(RANK_DEPARTED, 0) }

/* Scratch of the plan function: written and read inside one d_step only. */
hidden byte ord[MAXWIN];        /* window positions by cost descending, ties in window order */
hidden byte g_start[MAXWIN];    /* group g is ord[g_start[g] .. g_start[g] + g_size[g] - 1] */
hidden byte g_size[MAXWIN];
hidden byte g_good[MAXWIN];
hidden byte g_forced[MAXWIN];
hidden byte g_keep[MAXWIN];
hidden byte p_start[MAXT];      /* the groups a rank emits, after keeping or splitting */
hidden byte p_count[MAXT];
hidden byte emitted[MAXWIN];    /* window position leaves this round */
hidden byte h_groups, h_pieces, h_i, h_j, h_r, h_k, h_best, h_lead, h_cap, h_good, h_forced;
hidden int h_sum, h_mask;
hidden byte any_active, min_good, max_forced, max_groups, max_pieces, deferred;
hidden byte h_better;

#define COST(r, pos) cost[win[r].id[pos]]
#define GROUP_COST(r, g) (g_size[g] * COST(r, ord[g_start[g]]))
#define OPENER(g) ord[g_start[g]]

/* Window positions of rank r by cost descending; stable, so ties keep window order. */
inline sort_window(r) {
  h_i = 0;
  do
  :: h_i < win[r].count -> ord[h_i] = h_i; h_i++
  :: else -> break
  od;
  h_i = 1;
  do
  :: h_i < win[r].count ->
     h_j = h_i;
     do
     :: h_j > 0 ->
        if
        :: COST(r, ord[h_j - 1]) < COST(r, ord[h_j]) ->
           h_k = ord[h_j]; ord[h_j] = ord[h_j - 1]; ord[h_j - 1] = h_k; h_j--
        :: else -> break
        fi
     :: else -> break
     od;
     h_i++
  :: else -> break
  od
}

/* Local grouping (padded): the longest remaining sample opens a group of capacity
 * max(1, B / its cost); a group is good when full to capacity and HOLD percent filled;
 * forced when it holds a sample of age >= D. */
inline group_window(r) {
  h_groups = 0; h_i = 0; h_good = 0; h_forced = 0;
  do
  :: h_i < win[r].count ->
     h_lead = COST(r, ord[h_i]);
     h_cap = B / h_lead;
     if
     :: h_cap == 0 -> h_cap = 1
     :: else -> skip
     fi;
     g_start[h_groups] = h_i; g_size[h_groups] = 0; g_forced[h_groups] = false; h_sum = 0;
     do
     :: h_i < win[r].count && g_size[h_groups] < h_cap ->
        h_sum = h_sum + COST(r, ord[h_i]);
        if
        :: win[r].age[ord[h_i]] >= D -> g_forced[h_groups] = true
        :: else -> skip
        fi;
        g_size[h_groups]++; h_i++
     :: else -> break
     od;
     g_good[h_groups] = (g_size[h_groups] == h_cap && 100 * h_sum >= HOLD * g_size[h_groups] * h_lead);
     h_good = h_good + g_good[h_groups];
     h_forced = h_forced + g_forced[h_groups];
     h_groups++
  :: else -> break
  od
}

/* Keep priority: forced, then good, then costlier, then the opener first in window order. */
inline keeps_before(r, a, b) {
  if
  :: g_forced[a] != g_forced[b] -> h_better = g_forced[a]
  :: g_forced[a] == g_forced[b] && g_good[a] != g_good[b] -> h_better = g_good[a]
  :: g_forced[a] == g_forced[b] && g_good[a] == g_good[b] && GROUP_COST(r, a) != GROUP_COST(r, b) ->
     h_better = (GROUP_COST(r, a) > GROUP_COST(r, b))
  :: else -> h_better = (OPENER(a) < OPENER(b))
  fi
}

/* Fits rank r's groups to T: keep the T first by priority (the rest are deferred), or split the
 * piece with most samples (ties: earliest) in halves, the first half taking the extra sample. */
inline fit_groups(r) {
  h_pieces = 0;
  if
  :: h_groups > T ->
     h_i = 0;
     do
     :: h_i < h_groups -> g_keep[h_i] = false; h_i++
     :: else -> break
     od;
     h_k = 0;
     do
     :: h_k < T ->
        h_best = 255; h_i = 0;
        do
        :: h_i < h_groups ->
           if
           :: !g_keep[h_i] && h_best == 255 -> h_best = h_i
           :: !g_keep[h_i] && h_best != 255 ->
              keeps_before(r, h_i, h_best);
              if
              :: h_better -> h_best = h_i
              :: else -> skip
              fi
           :: else -> skip
           fi;
           h_i++
        :: else -> break
        od;
        g_keep[h_best] = true; h_k++
     :: else -> break
     od;
     h_i = 0;
     do
     :: h_i < h_groups ->
        if
        :: g_keep[h_i] -> p_start[h_pieces] = g_start[h_i]; p_count[h_pieces] = g_size[h_i]; h_pieces++
        :: else -> skip
        fi;
        h_i++
     :: else -> break
     od
  :: else ->
     h_i = 0;
     do
     :: h_i < h_groups -> p_start[h_i] = g_start[h_i]; p_count[h_i] = g_size[h_i]; h_i++
     :: else -> break
     od;
     h_pieces = h_groups;
     do
     :: h_pieces > 0 && h_pieces < T ->
        h_best = 0; h_i = 1;
        do
        :: h_i < h_pieces ->
           if
           :: p_count[h_i] > p_count[h_best] -> h_best = h_i
           :: else -> skip
           fi;
           h_i++
        :: else -> break
        od;
        if
        :: p_count[h_best] < 2 -> break
        :: else -> skip
        fi;
        /* The second half goes right after the first: list order stays (group, start). */
        h_i = h_pieces;
        do
        :: h_i > h_best + 1 -> p_start[h_i] = p_start[h_i - 1]; p_count[h_i] = p_count[h_i - 1]; h_i--
        :: else -> break
        od;
        h_k = (p_count[h_best] + 1) / 2;
        p_start[h_best + 1] = p_start[h_best] + h_k;
        p_count[h_best + 1] = p_count[h_best] - h_k;
        p_count[h_best] = h_k;
        h_pieces++
     :: else -> break
     od
  fi
}

/* Writes rank r's T steps (pieces, then IDLE) and keeps the deferred samples in window order,
 * one round older. */
inline apply_plan(r) {
  h_i = 0;
  do
  :: h_i < win[r].count -> emitted[h_i] = false; h_i++
  :: else -> break
  od;
  h_k = 0;
  do
  :: h_k < MAXT ->
     h_mask = 0;
     if
     :: h_k < h_pieces ->
        h_i = p_start[h_k];
        do
        :: h_i < p_start[h_k] + p_count[h_k] ->
           h_mask = h_mask | (1 << win[r].id[ord[h_i]]); emitted[ord[h_i]] = true; h_i++
        :: else -> break
        od
     :: else -> skip
     fi;
     plan[r].mask[h_k] = h_mask;
     h_k++
  :: else -> break
  od;
  h_j = 0; h_i = 0;
  do
  :: h_i < win[r].count ->
     if
     :: !emitted[h_i] ->
        win[r].id[h_j] = win[r].id[h_i];
        win[r].age[h_j] = win[r].age[h_i] + 1;
        /* Guarantee 4: nothing is deferred more than D times. */
        assert(win[r].age[h_j] <= D);
        h_j++
     :: else -> skip
     fi;
     h_i++
  :: else -> break
  od;
  deferred = deferred + h_j;
  h_i = h_j;
  do
  :: h_i < win[r].count -> win[r].id[h_i] = 0; win[r].age[h_i] = 0; h_i++
  :: else -> break
  od;
  win[r].count = h_j
}

/* The plan function F of round k over every rank's proposal (its window and state). */
inline plan_round(k) {
  /* Lockstep: every rank contributes to this round and to no other. */
  h_r = 0;
  do
  :: h_r < W -> assert(gathered[h_r] == k + 1); h_r++
  :: else -> break
  od;
  /* Step count T. */
  any_active = false; min_good = 255; max_forced = 0; max_groups = 0; h_r = 0;
  do
  :: h_r < W ->
     sort_window(h_r);
     group_window(h_r);
     if
     :: pstate[h_r] == ACTIVE ->
        any_active = true;
        if
        :: h_good < min_good -> min_good = h_good
        :: else -> skip
        fi
     :: else -> skip
     fi;
     if
     :: h_forced > max_forced -> max_forced = h_forced
     :: else -> skip
     fi;
     if
     :: h_groups > max_groups -> max_groups = h_groups
     :: else -> skip
     fi;
     h_r++
  :: else -> break
  od;
  if
  :: max_groups == 0 -> T = 0
  :: max_groups > 0 && !any_active -> T = max_groups
  :: else ->
     T = min_good;
     if
     :: max_forced > T -> T = max_forced
     :: else -> skip
     fi;
     if
     :: T == 0 -> T = 1
     :: else -> skip
     fi
  fi;
  /* Fit and apply on every rank. */
  deferred = 0; max_pieces = 0; h_r = 0;
  do
  :: h_r < W ->
     sort_window(h_r);
     group_window(h_r);
     fit_groups(h_r);
     apply_plan(h_r);
     if
     :: h_pieces > max_pieces -> max_pieces = h_pieces
     :: else -> skip
     fi;
     h_r++
  :: else -> break
  od;
  epoch_over = FORALL(IS_DONE, 0);
  /* No step is IDLE on every rank; a round with samples emits some; draining defers nothing. */
  assert(max_pieces == T);
  assert(max_groups == 0 || T > 0);
  assert(any_active || deferred == 0);
  assert(epoch_over == (max_groups == 0));
  /* Guarantee 4's round bound: ramp rounds (none) + samples + 1. */
  assert(k < N + 1);
  printf("MODEL round %d T %d deferred %d epoch_over %d\n", k, T, deferred, epoch_over);
#ifndef DERIVE
#if VARIANT == 0
  /* The outcomes the C++ core produces for the same scenario (scenarios.txt). */
  assert(k < ROUNDS);
  assert(T == expected_T[k]);
  assert(deferred == expected_deferred[k]);
  assert(epoch_over == (k == ROUNDS - 1));
#endif
#endif
  planned = k + 1
}

/* Admits the next WIN samples of rank r's shard (all that remain if fewer) and sets its state. */
inline admit(r) {
  h_i = 0;
  do
  :: h_i < WIN && cursor[r] < shard_len[r] ->
     assert(win[r].count < MAXWIN);
     win[r].id[win[r].count] = shard_first[r] + cursor[r];
     win[r].age[win[r].count] = 0;
     win[r].count++; cursor[r]++; h_i++
  :: else -> break
  od;
#if VARIANT == 2
  /* Leaves at its own end of data: whatever its window holds is never emitted. */
  if
  :: cursor[r] == shard_len[r] && win[r].count > 0 ->
     printf("MODEL rank %d leaves at its end of data, dropping %d samples\n", r, win[r].count);
     h_i = 0;
     do
     :: h_i < win[r].count -> win[r].id[h_i] = 0; win[r].age[h_i] = 0; h_i++
     :: else -> break
     od;
     win[r].count = 0
  :: else -> skip
  fi;
#endif
  if
  :: cursor[r] < shard_len[r] -> pstate[r] = ACTIVE
  :: cursor[r] == shard_len[r] && win[r].count > 0 -> pstate[r] = DRAINING
  :: else -> pstate[r] = DONE
  fi
}

/* Faults (crash-stop or stall, at most MAX_FAULTS, each before the rank passed the finish
 * barrier): a crashed rank makes no further move, a stalled one none until the abort key is set
 * (its peers' timeouts fired). A rank's loader may crash at any of its steps (between two waits it
 * touches nothing another process sees); its trainer stops with it. Every wait can be cancelled
 * by the abort key, and a set abort key wins over any other wake-up. Without faults nothing ever
 * sets the key, so those branches are left out of fault-free runs. */
#if MAX_FAULTS > 0
#define LIVE (!crashed[r] && (!stalled[r] || abort_key != 0))
#define CAN_FAULT(v) \
  (faults < MAX_FAULTS && !finish[v] && !departed[v] && !crashed[v] && !stalled[v])
#define FAULT(v, what, message) \
  if                            \
  :: faults == 0 -> fault_rank = v \
  :: else -> skip               \
  fi;                           \
  what[v] = true;               \
  faults++;                     \
  printf(message, v)
/* The loader aborts; closing its queue and firing the abort hook decide its trainer's outcome. */
#define OR_ABORT                                                                          \
  :: atomic {                                                                             \
       abort_key != 0 && !crashed[r] ->                                                   \
       loader_end[r] = ABORTED;                                                           \
       trainer_end[r] = ABORTED;                                                          \
       printf("MODEL rank %d: loader aborts (abort key %d)\n", r, abort_key)               \
     };                                                                                   \
     goto ended
#define OR_CRASH \
  :: atomic { CAN_FAULT(r) -> FAULT(r, crashed, "MODEL rank %d crashes\n") }; goto crash
#else
#define LIVE true
#define OR_ABORT
#define OR_CRASH
#endif

/* Every wait of a loader also ends when the run has: every rank departed (no abort key). Under
 * VARIANT 4 the loader leaves as soon as its own trainer departed. */
#if DEPART > 0 && VARIANT == 4
#define OR_DEPART                                                             \
  :: atomic {                                                                 \
       departed[r] && !crashed[r] ->                                          \
       loader_end[r] = DEPARTED;                                              \
       left[r] = true;                                                        \
       if                                                                     \
       :: abort_key == 0 && !ALL_DEPARTED -> fault_rank = r                   \
       :: else -> skip                                                        \
       fi;                                                                    \
       printf("MODEL rank %d: loader leaves with its trainer\n", r)           \
     };                                                                       \
     goto ended
#elif DEPART > 0
#define OR_DEPART                                                             \
  :: atomic {                                                                 \
       LIVE && abort_key == 0 && ALL_DEPARTED ->                              \
       loader_end[r] = DEPARTED;                                              \
       printf("MODEL rank %d: loader ends, every rank departed\n", r)         \
     };                                                                       \
     goto ended
#else
#define OR_DEPART
#endif

/* Packer, aligner, coordinator and emitter of rank r. */
proctype Loader(byte r) {
  chan batches = queue[r];
  xs batches;
  byte round = 0;
  byte step = 0;
  byte steps = 0;
  bool over = false;
  do
  :: if
     :: d_step {
          LIVE ->
          admit(r);
          printf("MODEL rank %d round %d: %e with %d samples\n", r, round, pstate[r], win[r].count);
#if VARIANT != 1
          /* Ready once admitted and the previous round's batches are in the queue. */
          ready[r] = round + 1
#endif
        }
     OR_CRASH
     fi;
#if VARIANT == 1
     if
     :: pstate[r] == DONE -> printf("MODEL rank %d is DONE and skips round %d\n", r, round); break
     :: else -> ready[r] = round + 1
     fi;
#endif
     /* Once every rank is ready, the one collective of the round: the last contribution
      * completes it, and F runs on all proposals. */
     if
     :: d_step {
          LIVE && abort_key == 0 && FORALL(READY_FOR, round + 1) ->
          gathered[r] = round + 1;
          if
          :: FORALL(GATHERED_FOR, round + 1) -> plan_round(round)
          :: else -> skip
          fi
        }
     OR_ABORT
     OR_CRASH
     OR_DEPART
     fi;
     if
     :: atomic { LIVE && abort_key == 0 && planned == round + 1 -> steps = T; over = epoch_over }
     OR_ABORT
     OR_CRASH
     OR_DEPART
     fi;
#if VARIANT == 3
     if
     :: r != 0 && released == round + 1 -> skip
     :: r == 0 -> skip
     fi;
#endif
     /* Emit the round's steps in order into the bounded batch queue. */
     do
     :: step < steps ->
        if
        :: atomic { LIVE && abort_key == 0 && nfull(batches) -> batches!BATCH, plan[r].mask[step] };
           step++
        OR_ABORT
        OR_CRASH
        OR_DEPART
        fi
     :: else -> step = 0; break
     od;
#if VARIANT == 3
     if
     :: r == 0 -> released = round + 1
     :: else -> skip
     fi;
#endif
     if
     :: over -> break
     :: else -> round++
     fi
  od;
  /* End of epoch, then the finish barrier. */
  if
  :: atomic { LIVE && abort_key == 0 && nfull(batches) -> batches!END, 0 }
  OR_ABORT
  OR_CRASH
  OR_DEPART
  fi;
  if
  :: atomic {
       LIVE && abort_key == 0 && FORALL(FINISH_SET, 0) ->
       loader_end[r] = FINISHED;
       trainer_end[r] = FINISHED
     }
  OR_ABORT
  OR_CRASH
  OR_DEPART
  fi;
  goto ended;
crash:
  round = 0; step = 0; steps = 0; over = false;
ended:
  skip
}

/* The trainer of rank r: takes a batch (IDLE included), then joins the gradient collective of
 * that step with every other trainer, and takes its next batch only once that collective has
 * completed; end-of-epoch sets its finish flag. Its outcome is decided by its loader: FINISHED at
 * the finish barrier, or ABORTED when the loader aborts, which closes the batch queue and, through
 * the Pipeline's abort hook (e.g. ncclCommAbort), fails the trainer's gradient collective
 * (assumption: the trainer's collectives fail when a peer dies or its communicator is aborted;
 * the loader cannot free a trainer blocked in one otherwise). The trainer's own exit after that
 * failure is not modelled: its waits are valid end states. */
proctype Trainer(byte r) {
  chan batches = queue[r];
  xr batches;
  mtype kind = BATCH;
  int mask = 0;
end_taking:
  do
  :: atomic {
       LIVE && trainer_end[r] == RUNNING && (DEPART == 0 || steps_taken[r] < DEPART) &&
       FORALL(AT_STEP, steps_taken[r]) && nempty(batches) ->
       batches?kind, mask;
       if
       :: kind == END -> finish[r] = true; printf("MODEL trainer %d: end of epoch\n", r)
       :: else ->
          if
          :: mask == 0 -> printf("MODEL trainer %d takes step %d: IDLE\n", r, steps_taken[r] + 1)
          :: else ->
             printf("MODEL trainer %d takes step %d: samples 0x%x\n", r, steps_taken[r] + 1, mask)
          fi;
          duplicated = duplicated || (covered & mask) != 0;
          covered = covered | mask;
          steps_taken[r]++;
          mask = 0
       fi
     };
     if
     :: kind == END -> break
     :: else -> skip
     fi
#if DEPART > 0
  /* Every trainer stops after DEPART steps and departs: announces it, then waits until every
   * rank has (its loader keeps taking part in rounds meanwhile). */
  :: atomic {
       LIVE && abort_key == 0 && trainer_end[r] == RUNNING && steps_taken[r] == DEPART ->
       departed[r] = true;
       printf("MODEL trainer %d departs after step %d\n", r, steps_taken[r])
     };
     break
#endif
  od;
#if DEPART > 0
end_departing:
  atomic {
    departed[r] && abort_key == 0 && trainer_end[r] == RUNNING && ALL_DEPARTED ->
    trainer_end[r] = DEPARTED
  }
#endif
}

/* The control plane's failure detection: heartbeats stop (crash, hung process) or a deadline
 * passes (collective deadline, peer_timeout, round_timeout); the first failure is written to the
 * abort key, which every rank watches. */
proctype ControlPlane() {
end_watching:
  atomic {
    EXISTS(IS_FAULTY, 0) ->
    abort_key = fault_rank + 1;
    printf("MODEL control plane: abort key set, rank %d failed\n", fault_rank)
  }
}

#if MAX_FAULTS > 0
/* A rank hangs at any moment (a stuck call, SIGSTOP, swapping) until its peers time out. */
#define STALL(v) atomic { CAN_FAULT(v) -> FAULT(v, stalled, "MODEL rank %d stalls\n") }

proctype Stalls() {
end_injecting:
  do
  :: STALL(0)
  :: STALL(1)
#if W > 2
  :: STALL(2)
#endif
#if W > 3
  :: STALL(3)
#endif
  od
}
#endif

init {
  byte r;
  atomic {
    load_scenario();
    r = 0;
    do
    :: r < W ->
       loader_end[r] = RUNNING; trainer_end[r] = RUNNING;
       run Loader(r); run Trainer(r); r++
    :: else -> break
    od;
    run ControlPlane();
#if MAX_FAULTS > 0
    run Stalls();
#endif
    r = 0
  }
}
