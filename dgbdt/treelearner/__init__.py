"""Growing one tree: the grower, the histogram kinds, quantization, the
constraints a split respects, and the learner strategies (learners/), the only
code that talks to other ranks while a tree grows."""
