#pragma once
// Every reason a pipeline can reject a sample for, by the name the ledger and the stats count it
// under: the reader's (a record's content, a tar shard's members, an image file), the
// tokenizer's, the image decoder's and the packer's.
#include <string>
#include <vector>

namespace odbatch::actors {

// Sorted, each name once (the tokenizer and the packer both say over_length).
std::vector<std::string> rejection_reasons();

}  // namespace odbatch::actors
