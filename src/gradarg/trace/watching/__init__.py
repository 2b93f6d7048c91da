"""``watch``: the record of the user's own training step, its findings and their explanations.

What it is for: ``watch`` (``watch`` and ``GradWatch``), composed of three parts that share
only ``model.Watched`` (the model's names, its engine, the step's progress; declared once):
the ``recorder`` (``Recorder``: the hooks on module calls and the notes they take, with
``callnotes``: in-place edits of parameters during a call, integer inputs, narrow-float
outputs' finiteness),
``gradhooks`` (``GradEvents``: the hooks on ``.grad``'s events: accumulation, ``GradScaler``'s
``unscale_``, optimizer steps and what they read, ``zero_grad``, ``GradScaler.step``, the
exception that ended the block; its records in ``observed``; with ``context``: each
backward's loss scale, DDP's ``no_sync``, the hooks of the user's on a parameter, read on
both sides; ``registrations``: parameters re-created by an assignment; ``frozengrads``: whether a frozen
parameter's ``.grad`` at a step is stale; ``schedules``: learning-rate
schedulers' steps against their optimizers'; ``maskmoves``: entries whose gradient a hook of
the user's zeroed that a step moved) and ``graphnotes``
(``GraphNotes``: what is read from the graph and the values at a few moments; with
``forwardnotes``: tensors outside the model that fed the forward, overflows).  Each part offers read-only views;
no module reads another's private state.  Then ``events`` (each parameter's ``.grad``
events, in order, and how they are read), ``records`` (module and parameter records and their
assembly), ``finding`` / ``findings`` / ``eventfindings`` (one function per thing that can be
wrong with a step; those read from observed ``.grad`` events in ``eventfindings``;
``magnitudes``: NaN/Inf gradients, vanishing or exploding ones, dead units (with ``recurrence``: a loop's state that grew until it overflowed); ``snapshots``: a ``state_dict()`` kept as a snapshot that is not a copy, a ``load_state_dict`` that changed nothing; ``unused``: module
outputs with history that got no gradient; ``reads``:
what the optimizer will read, the findings behind a checked "ok" and what was checked;
``scales``: what a step read against the losses' gradients, their scale and their average
over processes; ``zerocauses``: what is behind an all-zero gradient),
``explain``
(``GradWatch.why_no_grad`` in words; ``sourceuse``: how a class's source reads a parameter
that got no gradient) and ``view`` (rows, table, plot).  ``detail``: which
steps of a block are recorded in full (``watch(model, full_steps=k)``; the others light) and
what the findings say on a light step; ``sentinel``: on a light step, light notes of each
module call (weak references, autograd nodes), read only when the model's output is not
finite, to locate the module where the forward's first NaN/Inf comes from.  ``gradedits``:
an edit of ``.grad`` made out of place and thrown away between a backward and the optimizer
step; ``fnmodes``: the function mode it, ``graphless`` and ``intcuts`` push and pop from hooks.
``intcuts``: integer results (``argmax``, a comparison) computed in a full step's forward from
a module's output, the cut named for that output, and the calls that took values selected with
such an index without a path back (a VQ-VAE without straight-through); ``cutcalls``: the finding "cut from the
graph" (a trainable module's output without history, and the grad mode it ran in; the calls
noted by ``cutnotes``, with the line and the ``torch.no_grad()`` decorator or ``with`` block
around a call that ran with recording off).
``graphless``: a loss term computed from ``torch.autograd.grad``'s result without ``create_graph`` (followed by
a function mode), and a loss that is a leaf; ``trainmode``: the model's training mode at each
call; ``zeroops``: an all-zero gradient made by a module's own operations between two recorded
calls.

A new observed event is one hook in ``gradhooks`` (where torch has no hook for the call, a
wrapper in ``patches``, removed with the watch), its note in ``events`` and one finding in
``eventfindings``.

May import: every other sub-package of :mod:`gradarg.trace` (``graph``, ``draw``, ``tape``,
``why``) and :mod:`gradarg.core`, :mod:`gradarg.show`, ``gradarg._validate``.  Nothing imports
it but :mod:`gradarg.trace` itself.
"""
