#pragma once
// The pipeline's actors as CAF sees them: every atom, and each actor's typed interface (the
// messages it accepts). Only the actor layer includes this header (target
// odbatch_actor_interfaces); the messages themselves are plain values free of CAF
// (pipeline_messages.hpp).
#include <caf/all.hpp>

#include <cstdint>

#include "odbatch/core/plan.hpp"
#include "odbatch/core/proposal.hpp"
#include "odbatch/proto_msgs/pipeline_messages.hpp"

namespace odbatch {

using start_atom = caf::atom_constant<caf::atom("start")>;
using read_atom = caf::atom_constant<caf::atom("read")>;
using text_demand_atom = caf::atom_constant<caf::atom("tdemand")>;
using image_demand_atom = caf::atom_constant<caf::atom("idemand")>;
using credit_atom = caf::atom_constant<caf::atom("credit")>;
using want_atom = caf::atom_constant<caf::atom("want")>;
using admit_atom = caf::atom_constant<caf::atom("admit")>;
using restore_atom = caf::atom_constant<caf::atom("restore")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using open_atom = caf::atom_constant<caf::atom("open")>;
using primed_atom = caf::atom_constant<caf::atom("primed")>;
using propose_atom = caf::atom_constant<caf::atom("propose")>;
using round_end_atom = caf::atom_constant<caf::atom("roundend")>;
using emitted_atom = caf::atom_constant<caf::atom("emitted")>;
using epoch_end_atom = caf::atom_constant<caf::atom("epochend")>;
using stage_demand_atom = caf::atom_constant<caf::atom("sdemand")>;

// Tokenizer worker: starts asking the reader for text work; tokenizes each task for the joiner.
using tokenizer_worker_actor =
    caf::typed_actor<caf::reacts_to<start_atom>, caf::reacts_to<TextTask>>;

// Image decoder worker: starts asking the reader for image work; decodes each for the joiner.
using image_decoder_worker_actor =
    caf::typed_actor<caf::reacts_to<start_atom>, caf::reacts_to<ImageTask>>;

// Where a record or a sample goes next on its way through the user stages: the next stage's
// dispatcher, or back to the reader (records) or the joiner (samples) after the last.
using record_work_sink = caf::typed_actor<caf::reacts_to<RecordWork>>;
using sample_work_sink = caf::typed_actor<caf::reacts_to<SampleWork>>;

// A user stage's worker: starts asking its dispatcher for work; runs the stage on each item and
// sends it on.
using record_stage_worker_actor =
    caf::typed_actor<caf::reacts_to<start_atom>, caf::reacts_to<RecordWork>>;
using sample_stage_worker_actor =
    caf::typed_actor<caf::reacts_to<start_atom>, caf::reacts_to<SampleWork>>;

// A user stage's dispatcher: queues the items sent to the stage and hands each to a worker that
// asked for one.
using record_stage_dispatcher_actor =
    caf::typed_actor<caf::reacts_to<RecordWork>,
                     caf::reacts_to<stage_demand_atom, record_stage_worker_actor>>;
using sample_stage_dispatcher_actor =
    caf::typed_actor<caf::reacts_to<SampleWork>,
                     caf::reacts_to<stage_demand_atom, sample_stage_worker_actor>>;

// Reader: reads on (a message to itself), hands work to the worker that asks for it, and reads
// as far as the credits the joiner returns allow; records back from the record stages.
using reader_actor =
    caf::typed_actor<caf::reacts_to<read_atom>,
                     caf::reacts_to<text_demand_atom, tokenizer_worker_actor>,
                     caf::reacts_to<image_demand_atom, image_decoder_worker_actor>,
                     caf::reacts_to<credit_atom, std::uint32_t>, caf::reacts_to<RecordWork>>;

// Joiner: the reader's announcements and the workers' parts; samples back from the sample
// stages; the packer's wish for `n` more accepted samples.
using joiner_actor = caf::typed_actor<caf::reacts_to<SampleStart>, caf::reacts_to<TextDone>,
                                      caf::reacts_to<ImageDone>, caf::reacts_to<SampleWork>,
                                      caf::reacts_to<want_atom, std::uint32_t>>;

// Packer: starts the epoch's admission, opens round k, and screens each sample the joiner
// releases.
using packer_actor =
    caf::typed_actor<caf::reacts_to<start_atom>, caf::reacts_to<open_atom, std::uint64_t>,
                     caf::reacts_to<Joined>>;

// Aligner: admitted samples, restored ones (with their ages), the close of round k (whether the
// shard is exhausted, records consumed), the joiner's primed lookahead, and the emitter's word
// that round k's batches are all queued.
using aligner_actor =
    caf::typed_actor<caf::reacts_to<admit_atom, Joined>,
                     caf::reacts_to<restore_atom, Joined, std::uint32_t>,
                     caf::reacts_to<close_atom, std::uint64_t, bool, std::uint64_t>,
                     caf::reacts_to<primed_atom>, caf::reacts_to<emitted_atom, std::uint64_t>>;

// Coordinator: runs one round of the protocol for a proposal and answers with its plan.
using coordinator_actor =
    caf::typed_actor<caf::replies_to<propose_atom, Proposal>::with<RoundPlan>>;

// Emitter: collates and queues each step; answers the end of round k once its steps are queued;
// ends the epoch after its last step.
using emitter_actor =
    caf::typed_actor<caf::reacts_to<StepWork>, caf::reacts_to<round_end_atom, std::uint64_t>,
                     caf::reacts_to<epoch_end_atom, std::uint64_t>>;

}  // namespace odbatch

// Local messages only: they never leave the process, so they need no serialisation.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::SampleStart)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::TextTask)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::ImageTask)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::TextDone)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::ImageDone)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::Joined)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::RecordWork)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::SampleWork)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::StepWork)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::Proposal)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(odbatch::RoundPlan)
