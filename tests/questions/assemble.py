"""Assemble the question corpus from the collectors' parts and split off the held-out third.

    python tests/questions/assemble.py PART.json ... [--merge GROUPS.json] [--split]

Reads every part (a JSON list of records, see ``corpus.json``'s ``about``), merges records that
share an address (the first keeps the others in ``also``), numbers them within their topic, and
writes ``tests/questions/corpus.json``.  ``--merge`` names groups of near-duplicates found
by reading the questions (the same question in threads at different addresses): a JSON list of
lists of part ids (``PART:ID``), each merged into its first.  With ``--split`` (once, before any page is written) a
third of the records, drawn with ``random.Random(SPLIT_SEED)`` over the sorted ids, is marked
``held_out``: they are graded at the end by a reader who wrote nothing, and whoever writes pages
reads only the others (``python tests/questions/assemble.py --open > open.json``).  Without
``--split`` the held-out marks of an existing corpus are kept, matched by address.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
CORPUS = HERE / "corpus.json"
SPLIT_SEED = 20261129
ABOUT = (
    "Real questions about PyTorch autograd (backward and its gradient argument, grad / "
    "grad_outputs, VJPs and JVPs, Jacobians and Hessians, .grad None / zero / NaN, in-place and "
    "graph errors, retain_graph / create_graph / accumulation, higher order, custom "
    "autograd.Function, hooks, DDP / FSDP / AMP / torch.compile, sparse Jacobians, gradcheck), "
    "found by the fixed queries of queries.py through a search over PyTorch forum, Stack "
    "Overflow and GitHub issue threads, every in-scope result kept. Each record: source "
    "(address; also: addresses of near-duplicates merged into it), found_by (the query), "
    "topic, question (in our words), keywords (the asker's words and torch's message), answer "
    "(key facts, true on torch 2.13), error (torch 2.13's message, if any), thread_wrong (where "
    "the thread is outdated or wrong), check (Python asserting the answer; run by "
    "test_corpus.py), anchor (the site entry that answers it: page#label), held_out (the third "
    "put aside before any page was written); grade_before / grade_after (held-out records: the grade a "
    "reader who wrote nothing gave the site before and after the question pages: ANSWERED, "
    "PARTLY, ABSENT or WRONG, where, whether the asker's keywords found it in the top three); "
    "grade_round5: the same, by two other readers, after round 5's entries (thread_read_by_"
    "writers: round 5's writers met that thread through their own queries, so it is no longer "
    "blind); grade_round6: the same after round 6's entries, by two other readers."
    " Round 7 (part_id round7*): questions found by 30 new fixed queries (queries.py "
    "QUERIES_ROUND7) after the pages of rounds 1-6 were written, every record held out and "
    "graded blind (grade_round7) by readers who wrote nothing, on the site as it was before "
    "any entry was written for them; anchor null (the entries written afterwards are found by"
    " tests/browser/search_pairs.py)."
    " Round 8 (part_id round8*): questions found by 30 new fixed queries (queries.py "
    "QUERIES_ROUND8) after the pages of rounds 1-7 were written, every record held out and "
    "graded blind (grade_round8) by readers who wrote nothing; no entry was written for them "
    "(anchor null); two records whose answer could not be checked on CPU are left out."
    " Round 9 (part_id round9*): questions found by 30 new fixed queries (queries.py "
    "QUERIES_ROUND9) after the pages of rounds 1-8 were written, every record held out "
    "and graded blind (grade_round9) by readers who wrote nothing; no entry was written "
    "for them (anchor null)."
    " Round 10 (part_id round10*): 46 questions from 24 new fixed queries (QUERIES_ROUND10, 20 GitHub-issue and 4 forum queries in new words), collected by two helpers who wrote nothing, every in-scope result kept, each answer checked on torch 2.13; all held out and graded once, blind, by three readers who wrote nothing, on the site at commit e79ef0d (grade_round10; draft_id is the collector's id, the grade files' key). Round 11 (part_id round11*): 37 questions from 24 new fixed queries (QUERIES_ROUND11, 12 forum and 12 GitHub-issue queries), collected the same way by two helpers who wrote nothing; all held out and graded once, blind, by three readers who wrote nothing, on the site at commit c272d9b (grade_round11); then entries were written for the 24 not ANSWERED by two writers who read them, and three more readers who took no part graded all 37 again on the site at commit bc42a94 (grade_round11_after: not blind for the writers). Round 12 (part_id round12*): 36 questions from 24 new fixed queries (QUERIES_ROUND12, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read), collected by one helper who wrote nothing, every in-scope result kept (near-duplicates merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site at commit eeae38c (grade_round12, with grader and site_commit)."
    " Then entries were written for the 20 not ANSWERED by a writer who read them, and a reader who took no part graded all 36 again on the site at commit 173194f (grade_round12_after: not blind for the writer)."
    " Afterwards the records of rounds 7 to 9 not graded ANSWERED were given an anchor: the entry written for them since, which their keywords put in the search's first three; their grades stay those of the blind reading."
    " Round 13 (part_id round13*): 38 questions from 24 new fixed queries (QUERIES_ROUND13, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 230 results, 84 of them in scope, 25 of those already collected), collected by one helper who wrote nothing, every other in-scope result kept (19 near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site at commit eb7a69d (grade_round13, with grader and site_commit): 10 ANSWERED, 19 PARTLY, 8 ABSENT, 1 WRONG; search top 3 for 27 of 38."
    " Then entries were written for the 28 not ANSWERED by two writers who read them, and a reader who took no part graded all 38 again on the site at commit 904e2b6 (grade_round13_after: not blind for the writers): 33 ANSWERED, 5 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 38 of 38."
    " Round 14 (part_id round14*): 25 questions from 24 new fixed queries (QUERIES_ROUND14, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 217 results, 68 of them in scope, 22 of those already collected and 2 more pull requests of already collected issues), collected by one helper who wrote nothing, every other in-scope result kept (19 near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site at commit a757287 (grade_round14, with grader and site_commit): 7 ANSWERED, 16 PARTLY, 2 ABSENT, 0 WRONG; search top 3 for 21 of 25."
    " Then entries were written for the 18 not ANSWERED by two writers who read them, and a reader who took no part graded all 25 again on the site at commit bbcbae1 (grade_round14_after: not blind for the writers): 21 ANSWERED, 4 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 24 of 25."
    " Round 15 (part_id round15*): 11 questions from 24 new fixed queries (QUERIES_ROUND15, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 229 results, 61 of them in scope, 34 of those already collected, 4 more pull requests of already collected issues and 6 near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (5 near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site at commit bbcbae1 (grade_round15, with grader and site_commit): 6 ANSWERED, 4 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 11 of 11."
    " Then entries were written for the 5 not ANSWERED by one writer who read them, and a reader who took no part graded all 11 again on the site at commit e4e9ecf (grade_round15_after: not blind for the writer): 11 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 11 of 11."
    " Round 16 (part_id round16*): 12 questions from 24 new fixed queries (QUERIES_ROUND16, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 213 results, 89 of them in scope, 43 of those already collected, 1 more pull request of an already collected issue and 31 near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (2 near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site at commit e04caab (grade_round16, with grader and site_commit): 1 ANSWERED, 10 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 10 of 12."
    " Then entries were written for the 11 not ANSWERED by two writers who read them, and a reader who took no part graded all 12 again on the site at commit c085bea (grade_round16_after: not blind for the writers): 11 ANSWERED, 1 PARTLY (jacobians/106, ANSWERED in the blind grade and not rewritten: the second reader judged the same section to leave a fact implied), 0 ABSENT, 0 WRONG; search top 3 for 12 of 12."
    " Round 17 (part_id round17*): 18 questions from 24 new fixed queries (QUERIES_ROUND17, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 228 results, 67 of them in scope, 29 of those already collected (pull requests of collected issues included) and 10 near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (10 near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit adfd5a5 (grade_round17, with grader and site_commit): 0 ANSWERED, 17 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 14 of 18."
    " Then entries were written for the 18 not ANSWERED by two writers who read them, and a reader who took no part graded all 18 again on the site at commit bf3d620 (grade_round17_after: not blind for the writers): 18 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 18 of 18 (the reader noted that most entries restate the records' key facts one entry per question, so the figure says little about questions outside the set)."
    " Round 18 (part_id round18*): 18 questions from 24 new fixed queries (QUERIES_ROUND18, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 221 results, 61 of them in scope, 29 of those already collected (pull requests of collected issues included) and 11 near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (3 near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit cdbf0b8 (grade_round18, with grader and site_commit): 1 ANSWERED, 13 PARTLY, 4 ABSENT, 0 WRONG; search top 3 for 9 of 18."
    " Then entries were written for the 17 not ANSWERED by two writers who read them, and a reader who took no part graded all 18 again on the site at commit a58f5a6 (grade_round18_after: not blind for the writers): 17 ANSWERED, 1 PARTLY (distributed-amp-compile/176, ANSWERED in the blind grade and not rewritten: this reader judged that the sharded-clipping entry leaves the pipeline-stage case, the general p-norm rule and the inf-norm's MAX reduction to the reader), 0 ABSENT, 0 WRONG; search top 3 for 18 of 18."
    " Round 19 (part_id round19*): 16 questions from 24 new fixed queries (QUERIES_ROUND19, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 222 results, 80 in-scope threads, 34 of those already collected and 14 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (32 threads in 16 records, near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit a58f5a6 (grade_round19, with grader and site_commit): 1 ANSWERED, 12 PARTLY, 3 ABSENT, 0 WRONG; search top 3 for 11 of 16."
    " Then entries were written for the 15 not ANSWERED by two writers who read them, and a reader who took no part graded all 16 again on the site at commit ab34dfb (grade_round19_after: not blind for the writers): 15 ANSWERED, 1 PARTLY (backward-gradient/066, ANSWERED in the blind grade and not rewritten: this reader judged that no entry says .grad is the derivative of the one scalar backward was called on and that autograd never forms per-sample gradients), 0 ABSENT, 0 WRONG; search top 3 for 16 of 16."
    " Round 20 (part_id round20*): 14 questions from 24 new fixed queries (QUERIES_ROUND20, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 221 results, 105 of them in scope, 61 of those already collected (pull requests of collected issues included) and 29 near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (15 threads in 14 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit ab34dfb (grade_round20, with grader and site_commit): 1 ANSWERED, 13 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 8 of 14."
    " Then entries were written for the 13 not ANSWERED by two writers who read them, and a reader who took no part graded all 14 again on the site at commit 9d2c912 (grade_round20_after: not blind for the writers): 13 ANSWERED, 1 PARTLY (operator-gradients/136, ANSWERED in the blind grade and not rewritten: this reader judged that no entry states that the scatter_add_cuda_kernel error no longer appears, that scatter_reduce sum/mean on CUDA is deterministic too, the CPU case, the cost and warn_only=True), 0 ABSENT, 0 WRONG; search top 3 for 14 of 14."
    " Round 21 (part_id round21*): 17 questions from 24 new fixed queries (QUERIES_ROUND21, 12 forum and 12 GitHub-issue queries in words earlier rounds had not used, committed before any result was read; 229 results, 109 of them in scope, 77 of those already collected (pull requests of collected issues included) and 22 near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (19 threads in 17 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit c699af9 (after round 20's entries) (grade_round21, with grader and site_commit): 0 ANSWERED, 12 PARTLY, 4 ABSENT, 1 WRONG (questions/sparse-tensors#sparse-csr-mm-backward said torch.mm / @ with a CSR input that requires grad fail in backward; on a fresh CSR leaf they work: corrected at 1c91e48, with record sparse-gradcheck/044); search top 3 for 8 of 17."
    " Then entries were written for all 17 by two writers who read them (and the WRONG statement corrected), and a reader who took no part graded all 17 again on the site at commit 9ce9484 (grade_round21_after: not blind for the writers): 17 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 17 of 17. distributed-amp-compile/191's second fact corrected after the writer and the reader ran it: the forward-traceback message of anomaly mode under dist_autograd is a C++ warning on stderr, not absent."
    " Round 22 (part_id round22*): 12 questions from 24 new fixed queries (QUERIES_ROUND22, 12 forum and 12 GitHub-issue queries, committed before any result was read; 211 results (3 of them left off by the search and not seen), 89 already collected (pull requests of collected issues included), 64 out of scope, 55 new and in scope, 35 of those near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (near-duplicate addresses merged into also), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit c9793ed (grade_round22, with grader and site_commit): 1 ANSWERED, 10 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 10 of 12. The grader found questions/sparse-tensors#sparse-sparse-mm-backward misleading (not graded WRONG: it said .sum().backward() fails with both inputs requiring grad, literally true on 2.13, while a loss on the values works); the entry was rewritten and record sparse-gradcheck/037's second fact, which said the same, corrected and asserted. Then entries were written for the 11 not ANSWERED (and the sparse entry rewritten) by two writers who read them, and a reader who took no part graded all 12 again on the site at commit 1aa51f6 (grade_round22_after: not blind for the writers): 12 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 12 of 12."
    " Round 23 (part_id round23*): 9 questions from 24 new fixed queries (QUERIES_ROUND23, 12 forum and 12 GitHub-issue queries, committed before any result was read; 229 results, 65 already collected (pull requests of collected issues included), 117 out of scope, 47 new and in scope, 35 of those near-duplicates of collected questions at new addresses), collected by one helper who wrote nothing, every other in-scope result kept (12 addresses in 9 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 6fc59bd (grade_round23, with grader and site_commit): 2 ANSWERED, 6 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 7 of 9."
    " Then entries were written for all 9 by a writer who read them (one page, sparse-tensors, split first by concept: sparse-layouts), and a reader who took no part graded all 9 again on the site at commit 14961ee (grade_round23_after: not blind for the writer): 9 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 9 of 9."
    " Round 24 (part_id round24*): 16 questions from 24 new fixed queries (QUERIES_ROUND24, 12 forum and 12 GitHub-issue queries, committed before any result was read; 223 results (4 left off by the search and not seen), 98 out of scope, 121 in scope, 76 of those already collected (pull requests of collected issues included) and 24 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (21 addresses in 16 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 1df4127 (grade_round24, with grader and site_commit): 1 ANSWERED, 10 PARTLY, 3 ABSENT, 2 WRONG (questions/higher-order said cdist has no double backward: on 2.13 it has one with compute_mode='use_mm_for_euclid_dist', or by default above 25 rows; questions/dtensor said to_local labels the gradient with the DTensor's own placement: for a Partial DTensor it is Replicate); search top 3 for 13 of 16."
    " Record distributed-amp-compile/150's first fact corrected in round 24 (a writer found it while correcting the site): to_local's backward labels the gradient with the DTensor's own placements except that Partial becomes Replicate; its check asserts the Partial case too."
    " Then entries were written for all 16 (the two WRONG statements corrected in place) by two writers who read them, and a reader who took no part graded all 16 again on the site at commit a2b8c43 (grade_round24_after: not blind for the writers): 16 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 16 of 16 (distributed-amp-compile/200 judged ANSWERED on another fix than the record's, backward_pass_autocast, run by the reader on 2.13). Round 25 (part_id round25*): 8 questions from 24 new fixed queries (QUERIES_ROUND25, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 230 results, 53 in scope, 27 of those already collected and 16 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (10 addresses in 8 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit a2b8c43 (its text unchanged at 82d51c8) (grade_round25, with grader and site_commit): 1 ANSWERED, 6 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 6 of 8. The grader found questions/graph-errors#inplace-expanded-single-memory-location inaccurate (not graded WRONG): index_put_ on an expanded tensor warns on 2.13 (deprecated), only item assignment, fill_ and zero_ are silent. Then entries were written for the 7 not ANSWERED (and the expanded-tensor entry corrected; operator-gradients split by concept first: questions/discrete-sampling) by a writer who read them, and a reader who took no part graded all 8 again on the site at commit 805dcbe (grade_round25_after: not blind for the writer): 7 ANSWERED, 1 PARTLY (distributed-amp-compile/204, ANSWERED in the blind grade and not rewritten: this reader judged that the constant loss without the scaler and the optimizer built from another copy of the model are in a second entry, weights-not-updating#nograd-deepcopy-model-optimizer-mismatch), 0 ABSENT, 0 WRONG; search top 3 for 8 of 8. Round 26 (part_id round26*): 20 questions from 24 new fixed queries (QUERIES_ROUND26, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 232 results (1 more left off by the search and not seen), 54 in scope, 7 of those already collected and 3 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (44 addresses in 20 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 804800c (grade_round26, with grader and site_commit): 0 ANSWERED, 13 PARTLY, 7 ABSENT, 0 WRONG; search top 3 for 8 of 20. The grader found questions/api-contracts#contract-set-grad-enabled misleading (not graded WRONG): torch.set_grad_enabled(False) called as a function is per thread, not global. Then entries were written for all 20 by two writers who read them (new pages questions/op-complex-and-norms and questions/threads-and-grad-mode; the set_grad_enabled comment corrected), and a reader who took no part graded all 20 again on the site at commit bbed624 (grade_round26_after: not blind for the writers): 20 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 20 of 20. Round 27 (part_id round27*): 20 questions from 24 new fixed queries (QUERIES_ROUND27, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 233 results, 40 in scope (the twelve forum queries found none), 0 of those already collected and 1 near-duplicate of a collected question), collected by one helper who wrote nothing, every other in-scope result kept (39 addresses in 20 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit f9f62bf (grade_round27, with grader and site_commit): 3 ANSWERED, 8 PARTLY, 9 ABSENT, 0 WRONG; search top 3 for 6 of 20. Then entries were written for the 17 not ANSWERED by two writers who read them (new pages questions/op-selection-and-signal and questions/collectives-and-checkpoint-rng; four linear-algebra entries on questions/op-complex-and-norms; linalg-fft-pooling's 'reduced QR is always differentiable' corrected), and a reader who took no part graded all 20 again on the site at commit 4dda918 (grade_round27_after: not blind for the writers): 16 ANSWERED, 4 PARTLY (three of them ANSWERED in the blind grade and not rewritten: custom-functions/071 and /072, operator-gradients/153, judged stricter by this reader; distributed-amp-compile/210 with one fact in the next entry), 0 ABSENT, 0 WRONG; search top 3 for 20 of 20. Round 28 (part_id round28*): 5 questions from 24 new fixed queries (QUERIES_ROUND28, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 234 results, 14 in scope, 5 of those already collected and 3 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (6 addresses in 5 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 4dda918 (grade_round28, with grader and site_commit): 0 ANSWERED, 4 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 3 of 5. Then entries were written for all 5 on a new page, questions/losses-norms-activations, by a writer who read them, and a reader who took no part graded all 5 again on the site at commit 0fb8c95 (grade_round28_after: not blind for the writer): 5 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 5 of 5. Round 29 (part_id round29*): 21 questions from 24 new fixed queries (QUERIES_ROUND29, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 234 results, 61 in scope, 16 of those already collected and 8 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (37 addresses in 21 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit c07487a (grade_round29, with grader and site_commit): 3 ANSWERED, 13 PARTLY, 5 ABSENT, 0 WRONG; search top 3 for 10 of 21. Then entries were written for the 18 not ANSWERED by two writers who read them (new pages questions/gradients-by-hand and questions/control-flow-and-reductions; checkpoint context_fn and debug entries on questions/collectives-and-checkpoint-rng; the context_fn prose of distributed-amp-compile corrected: a callable, not the tuple create_selective_checkpoint_contexts returns), and a reader who took no part graded all 21 again on the site at commit 54f91dc (grade_round29_after: not blind for the writers): 19 ANSWERED, 2 PARTLY (accumulation-memory/086 and jacobians/119, ANSWERED in the blind grade and not rewritten), 0 ABSENT, 0 WRONG; search top 3 for 20 of 21. Round 30 (part_id round30*): 12 questions from 24 new fixed queries (QUERIES_ROUND30, 11 forum and 13 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 237 results, 43 in scope, 9 of those already collected and 12 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (22 addresses in 12 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 67238ab (grade_round30, with grader and site_commit): 2 ANSWERED, 7 PARTLY, 3 ABSENT, 0 WRONG; search top 3 for 7 of 12. Then entries were written for the 10 not ANSWERED by two writers who read them (new page questions/parameter-gradients; entries on gradients-by-hand, module-hooks, losses-norms-activations, operator-edge-cases and vjp-jvp; the softmax-minus-one-hot formula said to hold for class-index targets), and a reader who took no part graded all 12 again on the site at commit bdb331e (grade_round30_after: not blind for the writers): 10 ANSWERED, 2 PARTLY (operator-gradients/171 and hooks/069, ANSWERED in the blind grade and not rewritten), 0 ABSENT, 0 WRONG; search top 3 for 12 of 12."
    " Round 31 (part_id round31*): 7 questions from 24 new fixed queries (QUERIES_ROUND31, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 240 results, 42 in scope, 17 of those already collected and 9 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (16 addresses in 7 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 42ba43d (grade_round31, with grader and site_commit): 1 ANSWERED, 5 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 3 of 7. Then entries were written for the 6 not ANSWERED by a writer who read them (entries on reading-gradients, discrete-sampling and op-complex-and-norms; error-messages' CopySlices description corrected: an in-place write into a view), and a reader who took no part graded all 7 again on the site at commit 2a81a27 (grade_round31_after: not blind for the writer): 6 ANSWERED, 1 PARTLY (higher-order/055, ANSWERED in the blind grade and not rewritten), 0 ABSENT, 0 WRONG; search top 3 for 6 of 7."
    " Round 32 (part_id round32*): 11 questions from 24 new fixed queries (QUERIES_ROUND32, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 239 results (1 more left off by the search and not seen), 29 in scope (19 distinct questions), 3 of those already collected and 3 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept, each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 2a81a27 (grade_round32, with grader and site_commit): 0 ANSWERED, 9 PARTLY, 2 ABSENT, 0 WRONG; search top 3 for 3 of 11. Then entries were written for all 11 by two writers who read them (new page questions/gan-gradients; entries on gradients-by-hand, discrete-sampling, losses-norms-activations, parameter-gradients, control-flow-and-reductions and custom-ops; operator-edge-cases' hardsigmoid gradient at ±3 corrected), and a reader who took no part graded all 11 again on the site at commit 54007d3 (grade_round32_after: not blind for the writers): 11 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 11 of 11."
    " Round 33 (part_id round33*): 8 questions from 24 new fixed queries (QUERIES_ROUND33, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 239 results, 24 in scope, 2 of those already collected and 7 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (14 addresses in 8 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 86d99bb (grade_round33, with grader and site_commit): 0 ANSWERED, 7 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 3 of 8. Then entries were written for all 8 by a writer who read them (entries on losses-norms-activations, indexing-masking, linalg-fft-pooling, nan-inf, operator-edge-cases and op-selection-and-signal; no new page; the logit eps and scaled Bessel ive threads' wrong statements named), and a reader who took no part graded all 8 again on the site at commit f7bcc40 (grade_round33_after: not blind for the writer): 8 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 8 of 8."
    " Round 34 (part_id round34*): 4 questions from 24 new fixed queries (QUERIES_ROUND34, 12 forum and 12 GitHub-issue queries whose words overlap every earlier query's by at most half, committed before any result was read; 240 results, 18 in scope, 9 of those already collected and 2 near-duplicates of collected questions; the twelve forum queries found no new question), collected by one helper who wrote nothing, every other in-scope result kept (7 addresses in 4 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit e26c44b (grade_round34, with grader and site_commit): 0 ANSWERED, 3 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 2 of 4. Then entries were written for all 4 by a writer who read them (lobpcg backward on op-complex-and-norms; grid_sampler_3d_backward's argument checks and the 3-D backward's skipped input gradient on op-selection-and-signal; hardsigmoid's clamped gradient on losses-norms-activations; no new page), and a reader who took no part graded all 4 again on the site at commit 92e2d59 (grade_round34_after: not blind for the writer): 4 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 4 of 4."
    " Round 35 (part_id round35*): 9 questions from 24 new fixed queries (QUERIES_ROUND35, 8 forum and 16 GitHub-issue queries, 16 of them on operators no earlier query named, whose words overlap every earlier query's by at most 0.40, committed before any result was read; 253 results, 25 in scope, 3 of those already collected and 10 near-duplicates of collected questions), collected by one helper who wrote nothing, every other in-scope result kept (12 addresses in 9 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 5b2ce92 (grade_round35, with grader and site_commit): 0 ANSWERED, 6 PARTLY, 3 ABSENT, 0 WRONG; search top 3 for 6 of 9. Then entries were written for all 9 by two writers who read them (five on a new page, questions/linalg, split from linalg-fft-pooling: cholesky, lu_solve, solve_triangular, svd_lowrank, SVD memory; the CTC lengths on linalg-fft-pooling; the hard gumbel_softmax on discrete-sampling; MAML one task at a time on autograd-graph; per-layer backward time on reading-gradients), and a reader who took no part graded all 9 again on the site at commit 01c888e (grade_round35_after: not blind for the writers): 9 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 9 of 9."
    " Round 36 (part_id round36*): 8 questions from 24 new fixed queries (QUERIES_ROUND36, 6 forum and 18 GitHub-issue queries on operators no earlier query named, whose words overlap every earlier query's by at most 0.44, committed before any result was read; 260 results, 16 in-scope addresses, 6 of those already collected, no near-duplicate), collected by one helper who wrote nothing, every other in-scope result kept (10 addresses in 8 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit 01c888e (grade_round36, with grader and site_commit): 0 ANSWERED, 8 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 8 of 8 (two of them the operator table's row). Then entries were written for all 8 by two writers who read them (losses-norms-activations, op-complex-and-norms, operator-gradients, linalg, distributed-amp-compile, missing-gradients, backward-twice, higher-order; no new page), and a reader who took no part graded all 8 again on the site at commit 6c23dbc (grade_round36_after: not blind for the writers): 8 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 8 of 8."
    " Round 37 (part_id round37*): 3 questions from 24 new fixed queries (QUERIES_ROUND37, 11 forum and 13 GitHub-issue queries, the issue queries on operators no earlier query named, whose words overlap every earlier query's by at most half, committed before any result was read; 240 results, 17 in scope, 14 of those already collected (3 as the same question at another address); the eleven forum queries found no new question), collected by one helper who wrote nothing, every other in-scope result kept (3 addresses in 3 records), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit bb639d0, the first with the backward formulas page (grade_round37, with grader and site_commit): 0 ANSWERED, 2 PARTLY, 1 ABSENT, 0 WRONG; search top 3 for 2 of 3 (one of them the formulas page's lerp row). Then entries were written for all 3 by a writer who read them (linalg-fft-pooling, operator-gradients, custom-functions; no new page), and a reader who took no part graded all 3 again on the site at commit 68201fe (grade_round37_after: not blind for the writer): 3 ANSWERED, 0 PARTLY, 0 ABSENT, 0 WRONG; search top 3 for 3 of 3."
    " Round 38 (part_id round38*): 17 questions from 24 new fixed queries (QUERIES_ROUND38, 12 forum and 12 GitHub-issue queries in words no earlier round used, committed before any result was read; 237 results, 33 in-scope addresses, 4 already collected, 1 near-duplicate of a collected question, 5 pull requests merged into the new records, 6 left out: 4 MPS-only bugs that cannot be checked on a CPU, 2 whose text is cut off before the failing step), collected by one helper who wrote nothing (helper-330), each answer checked on torch 2.13; all held out and graded once, blind, by that helper on the site built at commit e3f969f (grade_round38): 2 ANSWERED, 9 PARTLY, 6 ABSENT, 0 WRONG; search top 3 for 9 of 17. Then entries were written for the 15 not ANSWERED and one of the two ANSWERED by a writer who read them (a new page, questions/torchscript, with four entries; entries on detach-grad, discrete-sampling, indexing-masking, nested-tensors, op-complex-and-norms, graph-errors, hooks and checkpointing; backward-twice's spectral_norm words), and a reader who took no part graded all 17 again on the site at commit 34f33a3 (grade_round38_after: not blind for the writer): 14 ANSWERED, 3 PARTLY (missing-gradients/073, ANSWERED in the blind grade and not rewritten: no straight-through form for thresholded scores; missing-gradients/074 and nan-inf/053 on the padding-mask entry: the all-keys-masked NaN and the zero gradient of replaced entries not said there), 0 ABSENT, 0 WRONG; search top 3 for 17 of 17."
)


def _key(url: str) -> str:
    return url.strip().rstrip("/").split("#")[0].lower()


def shared_addresses(parts: list[tuple[str, list[dict]]]) -> set[str]:
    """Addresses that hold several different questions (a page collecting many forum threads,
    which is all the search gave for them): never a reason to merge two records."""
    shared = set()
    for _, part in parts:
        seen: set[str] = set()
        for record in part:
            key = _key(record["source"])
            if key in seen:
                shared.add(key)
            seen.add(key)
    return shared


# the blind grades a record may carry, in the order they are written: before and after the
# first question pages, rounds 5 to 10 once, then from round 11 a first grade and one after
# the round's entries
LAST_ROUND = 38
# rounds whose grade after their entries is still to come
AFTER_PENDING: tuple[int, ...] = ()
GRADE_FIELDS = ("grade_before", "grade_after", "grade_round5", "grade_round6",
                *(f"grade_round{k}" for k in range(7, 11)),
                *(g for k in range(11, LAST_ROUND + 1)
                  for g in (f"grade_round{k}", f"grade_round{k}_after")))
# a record's fields, in the order corpus.json writes them (grades only where given)
FIELDS = ("id", "topic", "source", "also", "source_kind", "found_by", "question", "keywords",
          "answer", "error", "thread_wrong", "check", "isolated", "anchor", "held_out",
          "thread_answer", "part_id", "merged_parts", *GRADE_FIELDS)


def source_kind(url: str) -> str:
    """``github-issue``, ``stackoverflow`` or ``forum`` (discuss.pytorch.org and its mirrors)."""
    if "github.com" in url:
        return "github-issue"
    if "stackoverflow.com" in url or "stackexchange.com" in url:
        return "stackoverflow"
    return "forum"


def needs_isolation(check: str) -> bool:
    """A check that compiles or starts a process group runs in its own interpreter."""
    return any(w in check for w in ("torch.compile", "init_process_group", "torch._dynamo"))


def merge(parts: list[tuple[str, list[dict]]]) -> list[dict]:
    by_address: dict[str, dict] = {}
    merged: list[dict] = []
    shared = shared_addresses(parts)
    for name, part in parts:
        for record in part:
            addresses = [a for a in [record["source"], *record.get("also", [])]
                         if _key(a) not in shared]
            known = next((by_address[_key(a)] for a in addresses if _key(a) in by_address), None)
            if known is not None:
                for a in addresses:
                    if _key(a) not in by_address:
                        known.setdefault("also", []).append(a)
                        by_address[_key(a)] = known
                continue
            record = dict(record)
            record["part_id"] = f"{name}:{record['id']}"
            merged.append(record)
            for a in addresses:
                by_address[_key(a)] = record
    return merged


def merge_groups(records: list[dict], groups: list[list[str]]) -> list[dict]:
    """Merge the records of each group (part ids of near-duplicates: the same question asked
    in different threads) into the first: its addresses and keywords gain the others'."""
    by_part = {r["part_id"]: r for r in records}
    dropped: set[str] = set()
    for group in groups:
        members = [by_part[g] for g in group if g in by_part and g not in dropped]
        if len(members) < 2:
            continue
        first, *rest = members
        for other in rest:
            first["also"] = [*first.get("also", []), other["source"], *other.get("also", [])]
            first["keywords"] = list(dict.fromkeys([*first["keywords"], *other["keywords"]]))
            first.setdefault("merged_parts", []).append(other["part_id"])
            dropped.add(other["part_id"])
    return [r for r in records if r["part_id"] not in dropped]


def number(records: list[dict]) -> None:
    """Ids ``topic/NNN``, numbered within each topic in the order of the records."""
    counters: dict[str, int] = {}
    for record in records:
        topic = record["topic"]
        counters[topic] = counters.get(topic, 0) + 1
        record["id"] = f"{topic}/{counters[topic]:03d}"


def split(records: list[dict]) -> None:
    ids = sorted(r["id"] for r in records)
    held = set(random.Random(SPLIT_SEED).sample(ids, round(len(ids) / 3)))
    for r in records:
        r["held_out"] = r["id"] in held


def main(argv: list[str]) -> int:
    if argv == ["--open"]:
        data = json.loads(CORPUS.read_text())
        print(json.dumps([r for r in data["records"] if not r["held_out"]], indent=1))
        return 0
    do_split = "--split" in argv
    groups: list[list[str]] = []
    if "--merge" in argv:
        at = argv.index("--merge")
        groups = json.loads(Path(argv[at + 1]).read_text())
        argv = argv[:at] + argv[at + 2:]
    files = [a for a in argv if a != "--split"]
    records = merge([(Path(f).name.split(".")[0], json.loads(Path(f).read_text()))
                     for f in files])
    records = merge_groups(records, groups)
    number(records)
    if do_split:
        split(records)
    else:
        old = {r["part_id"]: r for r in json.loads(CORPUS.read_text())["records"]}
        for r in records:
            before = old.get(r["part_id"])
            if not r.get("source_kind"):  # a record of a later round names neither
                r["source_kind"] = source_kind(r["source"])
                r["isolated"] = needs_isolation(r["check"])
            if before is None:
                # a record of a later round: collected by whoever wrote its entry, so open
                r["held_out"] = False
                continue
            r["held_out"] = before["held_out"]
            r["id"] = before["id"]
            for kept in ("anchor", *GRADE_FIELDS):
                if before.get(kept) and not r.get(kept):
                    r[kept] = before[kept]
    out = [{f: r.get(f, [] if f in ("also", "merged_parts") else None) for f in FIELDS}
           for r in records]
    for r in out:
        r["isolated"] = bool(r["isolated"])
        for grade in GRADE_FIELDS:  # held-out only
            if r[grade] is None:
                del r[grade]
    data = {"about": ABOUT, "split_seed": SPLIT_SEED, "records": out}
    CORPUS.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(out)} records, {sum(r['held_out'] for r in out)} held out")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
