"""What readers type into the site's search box, and the page that answers it.

One pair a line: ``(query, page)``, or ``(query, (page, page))`` when either page answers it.
Pages are named by their path without ``.html``; a question-and-answer page (``questions/``)
is listed beside the guide page where one of its entries answers the query as well.
tests/browser/test_search.py checks that the page lands among the first three results. Add a question by appending a line.

``PAIRS`` name pages that exist. ``PENDING`` name pages being written: each of their pairs is
skipped while its page is missing from the built site, and checked as soon as it is there.
"""

from __future__ import annotations

PAIRS: list[tuple[str, str | tuple[str, ...]]] = [
    # pasted error messages and warnings, as torch prints them
    (("custom GRU gradients differ from nn.GRU reproduce outputs but not gradients jit "
      "ScriptModule GRU cell compare weight_ih_l0.grad custom LSTM example gradients"),
     "questions/accumulation-memory"),
    (("manually computed gradient different from loss.backward() ratio constant per iteration "
      "amp loss scaled by 256 clip_grad_norm retain_grad output gradient conv weight"),
     "questions/nan-debugging"),
    (("torch.norm p=float('inf') wrong gradient non-unique max values infinity norm backward "
      "linalg.vector_norm ord inf gradient norm backward abs in forward"),
     "questions/op-complex-and-norms"),
    (("torch.linalg.norm returns inf gradient silently 0 sum of squares overflow float32 "
      "F.normalize returns zeros norm of large values"), "questions/op-complex-and-norms"),
    (("clip_grad_norm_ norm_type inf clip_grad_norm use torch.linalg.vector_norm "
      "_foreach_norm inf support infinity norm gradient clipping"), "questions/nan-debugging"),
    (("torch.angle() grads are wrong angle vs atan2 training diverges complex angle backward "
      "angle gradient real tensor"), "questions/op-complex-and-norms"),
    (("torch.polar autograd support polar backward gradient of torch.polar abs angle "
      "complex from magnitude and phase gradient"), "questions/op-complex-and-norms"),
    (("masked_scatter gradient source gradient wrong positions masked_scatter backward "
      "only masked positions contribute"), "questions/op-complex-and-norms"),
    (("embedding_bag per_sample_weights backward differentiable per_sample_weights "
      "EmbeddingBag weighted sum gradient per_sample_weights mode sum"),
     "questions/op-complex-and-norms"),
    (("Beta rsample gradient concentration Dirichlet reparameterized gradient dirichlet_grad "
      "approximation has_rsample Beta Dirichlet implicit reparameterization gamma"),
     "questions/discrete-sampling"),
    ("RuntimeError: grad can be implicitly created only for scalar outputs", "guide/errors"),
    ("grad can be implicitly created only for scalar outputs", "guide/errors"),
    ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
     ("guide/errors", "questions/missing-gradients")),
    (("RuntimeError: Trying to backward through the graph a second time (or directly access "
      "saved tensors after they have already been freed)"),
     ("guide/errors", "questions/backward-twice")),
    (("Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has a "
      "shape of torch.Size([2])"), "guide/errors"),
    ("UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
     ("guide/errors", "guide/missing-gradients")),
    (("one of the variables needed for gradient computation has been modified by an inplace "
      "operation"), ("guide/missing-gradients", "questions/graph-errors")),
    ("Only Tensors of floating point and complex dtype can require gradients",
     ("guide/missing-gradients", "questions/missing-gradients")),
    ("TypeError: unsupported operand type(s) for *: 'NoneType' and 'float' weight.grad",
     ("guide/missing-gradients", "questions/missing-gradients")),
    ("loss tensor(0.53, grad_fn=<MseLossBackward0>) but mselossbackward0 NoneType",
     "guide/missing-gradients"),
    ("grad can be implicitly created only for real scalar outputs complex",
     ("guide/errors", "guide/complex")),
    ("Function MulBackward0 returned nan values in its 0th output",
     ("guide/nan-gradients", "questions/nan-inf", "questions/nan-debugging")),
    ("GradcheckError: Jacobian mismatch for output 0 with respect to input 0",
     ("guide/checking-a-backward", "questions/sparse-gradcheck", "questions/custom-functions")),
    ("ValueError: can't optimize a non-leaf Tensor",
     'questions/error-messages'),
    ("TypeError: cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)",
     'questions/error-messages'),
    ('AttributeError: cannot assign parameters before Module.__init__() call',
     'questions/error-messages'),
    ('AssertionError: No inf checks were recorded for this optimizer.',
     'questions/error-messages'),
    ('RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled',
     'questions/error-messages'),
    ('CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than during the forward pass.',
     'questions/error-messages'),
    ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow",
     ('questions/error-messages-func', 'guide/torch-func')),
    ("RuntimeError: Cannot access data pointer of Tensor that doesn't have storage",
     'questions/error-messages-func'),
    ("RuntimeError: can't retain_grad on Tensor that has requires_grad=False",
     'questions/error-messages'),
    ('RuntimeError: cannot resize variables that require grad',
     'questions/error-messages'),
    ("RuntimeError: attempting to assign a gradient of size '[6]' to a tensor of size '[2, 3]'",
     'questions/error-messages'),
    ('Inplace update to inference tensor outside InferenceMode is not allowed',
     'questions/error-messages'),
    ('what does AsStridedBackward0 UnsafeViewBackward0 CopySlices mean',
     'questions/error-messages'),
    ('which is output 0 of AsStrided, is at version 1; expected version 0 instead',
     ('questions/error-messages', 'questions/graph-errors', 'guide/errors')),
    ("NotImplementedError: the derivative for 'igamma: input' is not implemented.",
     'questions/error-messages'),
    ('RuntimeError: backward() called inside a functorch transform',
     'questions/error-messages-func'),
    ('jvp(f, primals, tangents): Expected primals to be a tuple',
     'questions/error-messages-func'),
    ('When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter to .backward()',
     'questions/error-messages'),
    ('Some elements marked as dirty during the forward method were not returned as output',
     'questions/error-messages'),
    ('Cannot use both regular backward hooks and full backward hooks on a single Module',
     'questions/error-messages'),
    ("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'tuple'>",
     'questions/error-messages-func'),
    ('vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [2, 3] for the mapped dimension',
     'questions/error-messages-func'),
    ('The Tensor returned by the function given to hessian should contain a single element',
     'questions/error-messages'),
    ('Output 0 of the user-provided function does not require gradients strict mode',
     'questions/error-messages'),
    ('UserWarning: To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()',
     ('questions/error-messages', 'guide/missing-gradients')),
    ("RuntimeError: Can't detach views in-place. Use detach() instead.",
     'questions/error-messages'),
    ('ValueError: gradcheck expects at least one input tensor to require gradient',
     'questions/error-messages'),
    ('UserWarning: Anomaly Detection has been enabled. This mode will increase the runtime',
     'questions/error-messages'),
    ('RuntimeError: `inputs` argument to `backward()` cannot be empty.',
     'questions/error-messages'),
    ('Trying to set a forward gradient that has a different size than that of the original Tensor',
     'questions/error-messages-func'),
    ('RuntimeError: post accumulate grad hooks cannot be registered on non-leaf tensors',
     'questions/error-messages'),
    ('Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()',
     'questions/error-messages'),
    ("RuntimeError: argnums must be int or Tuple[int, ...], got: <class 'list'>",
     'questions/error-messages-func'),
    ('RuntimeError: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment',
     'questions/error-messages'),
    ('vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over indexing with a boolean mask.',
     'questions/error-messages-func'),
    ('replaced model.fc with new nn.Linear layer not training',
     'questions/weights-not-updating'),
    ('inductor no error modified by an inplace operation compiled x @ w',
     'questions/compile'),
    # loose words
    ("multiple GPUs", "guide/errors"),
    ("DataParallel loss.backward error", "guide/errors"),
    ("multi-task loss two losses", ("guide/accumulation", "tutorial/why-a-vector")),
    ("backprop one row of the output", ("tutorial/matrix-product", "guide/whole-jacobians")),
    ("retain_graph", ("guide/accumulation", "guide/errors")),
    ("why is my grad None after backward",
     ("guide/missing-gradients", "questions/missing-gradients")),
    ("gradient is zero dead relu", "guide/missing-gradients"),
    ("nan gradient from sqrt at zero", "guide/nan-gradients"),
    ("detach item numpy breaks the graph", "guide/missing-gradients"),
    ("grad keeps growing every iteration forgot zero_grad", "guide/accumulation"),
    ("optimizer.zero_grad set_to_none", ("guide/accumulation", "questions/accumulation-memory")),
    ("what does the gradient argument of backward mean",
     ("index", "tutorial/vjp-by-examples", "tutorial/why-a-vector", "reference/cheatsheet")),
    ("why does backward take a vector instead of returning the jacobian",
     ("tutorial/why-a-vector", "guide/why-not-build-j")),
    ("is it a jacobian-vector product or a vector-jacobian product", "guide/convention"),
    ("shape of the jacobian flattened row-major", "guide/convention"),
    ("difference between backward and torch.autograd.grad",
     ("guide/five-ways", "questions/what-backward-computes")),
    ("torch.func.vjp", ("guide/five-ways", "guide/whole-jacobians", "questions/jacobians",
                        "questions/vjp-jvp")),
    ("compute the full jacobian matrix", "guide/whole-jacobians"),
    ("jacrev vmap is_grads_batched", "guide/whole-jacobians"),
    ("jacobian of softmax", "guide/whole-jacobians"),
    ("jacobian vector product forward mode", "guide/forward-mode"),
    ("forward_ad dual tensor", "guide/forward-mode"),
    ("jacfwd or jacrev which is faster", "guide/forward-mode"),
    ("memory of building the jacobian versus backward", "guide/why-not-build-j"),
    ("sparse jacobian graph coloring fewer backward passes", "guide/sparse-jacobians"),
    ("sparse hessian of an energy", "guide/sparse-jacobians"),
    ("torch.compile compiles again every run of my script", "guide/sparse-jacobians"),
    ("TORCHINDUCTOR_CACHE_DIR", "guide/sparse-jacobians"),
    ("complex gradient conjugate wirtinger", "guide/complex"),
    ("check my custom autograd Function backward is correct gradcheck",
     "guide/checking-a-backward"),
    ("vanishing gradients deep sigmoid network", "guide/gradient-flow"),
    ("gradient norms per layer during training", "guide/gradient-flow"),
    ("DistributedDataParallel FSDP2 gradients", "guide/gradient-flow"),
    ("gradient from a black box simulator estimated by finite differences", "tutorial/black-box"),
    ("start backward from an intermediate node of the chain", "tutorial/scalar-chain"),
    ("weigh two losses differently in one backward", ("tutorial/why-a-vector",
                                                      "guide/accumulation")),
    ("one-hot gradient picks a row of the jacobian", ("tutorial/matrix-product",
                                                      "guide/whole-jacobians")),
    ("create_graph second derivative", ("guide/higher-order", "guide/accumulation")),
    ("register_hook gradient of an intermediate tensor",
     ("guide/hooks", "guide/accumulation", "questions/hooks")),
    # the pages on hooks, custom Functions, torch.func and second derivatives
    ("register_full_backward_hook grad_input grad_output", "guide/hooks"),
    ("how do I remove a hook handle.remove()", "guide/hooks"),
    ("register_post_accumulate_grad_hook", "guide/hooks"),
    ("mask the gradient of some embedding rows with a hook", "guide/hooks"),
    ("write a custom autograd.Function with ctx.save_for_backward", "guide/custom-functions"),
    (("RuntimeError: function MyFnBackward returned an incorrect number of gradients "
      "(expected 2, got 1)"), "guide/custom-functions"),
    ("once_differentiable", ("guide/custom-functions", "questions/custom-functions")),
    ("gradient reversal layer", "guide/custom-functions"),
    ("per-sample gradients vmap grad", ("guide/torch-func", "questions/per-sample-gradients")),
    ("functional_call jacobian with respect to model parameters", "guide/torch-func"),
    ("hessian diagonal hutchinson estimator", "guide/torch-func"),
    ("gradient penalty create_graph=True", "guide/higher-order"),
    ("second derivative of a linear function is None allow_unused", "guide/higher-order"),
    ("materialize_grads", ("guide/higher-order", "questions/higher-order")),
    (("Full backward hook is firing when gradients are computed with respect to module outputs "
     "since no inputs require gradients"), "guide/hooks"),
    ("backward hook not called model.forward", "guide/hooks"),
    ("freeze some rows of an embedding", "guide/hooks"),
    ("must override the setup_context staticmethod", "guide/custom-functions"),
    ("trying to differentiate twice a function that was marked with @once_differentiable",
     "guide/custom-functions"),
    ("nn.Module backward method never called", "guide/custom-functions"),
    ("vmap grad in_dims None 0 0", "guide/torch-func"),
    ("vmap: called random operation while in randomness error mode", "guide/torch-func"),
    ("hessian is all zeros relu", "guide/torch-func"),
    ("hessian with respect to model parameters functional_call", "guide/torch-func"),
    ("second derivative create_graph", ("guide/higher-order", "guide/accumulation")),
    ("gradient penalty WGAN-GP grad_outputs ones_like", "guide/higher-order"),
    (("Using backward() with create_graph=True will create a reference cycle between the "
     "parameter and its gradient"), "guide/higher-order"),
    ("hessian vector product double backward", "guide/higher-order"),
    # the causes and the gradient argument in practice
    ("a leaf Variable that requires grad is being used in an in-place operation",
     ("guide/errors", "questions/graph-errors")),
    ("The differentiated Tensor at index 0 appears to not have been used in the graph",
     ("guide/errors", "guide/higher-order")),
    ("nan gradient torch.where loss is finite", "guide/nan-gradients"),
    ("grad is None after .to(device) requires_grad", "guide/missing-gradients"),
    ("torch.tensor list of tensors no gradient stack", "guide/missing-gradients"),
    ("argmax in loss no gradient", "guide/missing-gradients"),
    ("my loss is finite but the gradient is NaN", "guide/nan-gradients"),
    ("detect_anomaly which operation produced nan", "guide/nan-gradients"),
    ("double where trick log 0", "guide/nan-gradients"),
    ("weighted loss reduction none backward weights", "guide/accumulation"),
    ("per-sample gradients backward ones_like batchnorm", ("guide/accumulation", "guide/torch-func")),
    ("PINN second derivative u_xx grad_outputs ones", "guide/whole-jacobians"),
    ("autograd.grad list of outputs identical rows", "guide/whole-jacobians"),
    ("grad_outputs None", "guide/accumulation"),
    # API names
    ("gradarg.jacobian", "reference/api"),
    ("why_no_grad", ("guide/missing-gradients", "reference/api")),
    ("check_backward", ("guide/checking-a-backward", "reference/api")),
    ("cheat sheet", "reference/cheatsheet"),
    # everyday traps, what torch 2.13 does now, DDP and FSDP2, sparse linear algebra
    ("model.requires_grad = False does not freeze the layers", "questions/weights-not-updating"),
    ("softmax before CrossEntropyLoss slow training", "questions/operator-edge-cases"),
    ("gradient accumulation last batch not divisible by accumulation_steps",
     "questions/accumulation-memory"),
    ("index_select sparse tensor backward", "questions/sparse-tensors"),
    ("gradient with respect to values of sparse_coo_tensor addmm", "questions/sparse-tensors"),
    ("torch.linalg.solve sparse matrix backward", "questions/sparse-tensors"),
    ("vmap index_fill batching rule", "questions/error-messages-func"),
    ("Cannot access data pointer of Tensor that doesn't have storage data_ptr",
     "questions/error-messages-func"),
    ("torch.compile torch.func.grad wrong gradient", "questions/compile"),
    ("There was no fake impl registered custom_op torch.compile", "questions/compile"),
    ("DDP no_sync forward inside the context", "questions/distributed-amp-compile"),
    ("DDP static_graph=True", "questions/distributed-amp-compile"),
    ("FSDP2 fully_shard forward twice before backward", "questions/distributed-amp-compile"),
    ("clip_grad_norm_ vs clip_grad_value_ where to clip", "questions/distributed-amp-compile"),
    ("modified by an inplace operation which is output 0 of AsStrided",
     ("questions/graph-errors", "questions/backward-twice")),
    ("memory_reserved memory_allocated empty_cache retain_graph", "questions/memory"),
    ("more than one element of the written-to tensor refers to a single memory location expand",
     ("guide/custom-functions", "questions/graph-errors")),
    # families, what 2.13 does now, memory that grows, what a value or a node name means
    ("vmap masked_scatter performance drop batching rule", "questions/error-messages-func"),
    ("saliency map gradient with respect to input image", "questions/reading-gradients"),
    ("Grad-CAM gradient of feature map channel weights", "questions/reading-gradients"),
    ("cross entropy loss stuck at 2.30 log(10)", "questions/reading-gradients"),
    ("UnsafeViewBackward0 ViewBackward0 grad_fn meaning", ("questions/reading-gradients",
                                                           "questions/error-messages")),
    ("gradient of intermediate tensor dy/dz after loss.backward()",
     "questions/reading-gradients"),
    ("hook closure reference cycle model not freed gc.collect", "questions/memory"),
    ("memory still grows although I use .item()", "questions/memory"),
    ("logsumexp all -inf NaN gradient", "questions/nan-inf"),
    ("custom autograd Function same tensor passed twice", "questions/custom-functions"),
    ("double backward topk sort gather hessian", "questions/higher-order"),
    ("second derivative torch.sparse.mm create_graph", "questions/sparse-tensors"),
    ("jacobian vectorize=True torch.jit.script", "questions/jacobian-api"),
    ("order in which hooks fire post accumulate grad hook module hook",
     ("questions/api-contracts", "guide/hooks")),
    ("functional_call self.parameters() inside forward", "questions/api-contracts"),
    ("custom torch.compile backend only gets forward graph no backward",
     "questions/compile-backward"),
    ("nn.DataParallel on CPU how are gradients summed from replicas",
     "questions/distributed-amp-compile"),
    ("gradient of values sparse_coo_tensor to_sparse_csr dense or sparse densify",
     "questions/sparse-layouts"),
    ("spsolve custom autograd Function sparse linear solve backward", "questions/sparse-tensors"),
    ("second derivative through to_sparse_coo create_graph", "questions/sparse-layouts"),
    ("compiled autograd hook order tensor hook post accumulate module full backward hook",
     "questions/compile-backward"),
    ("aot_module parameters _param_constant make_fx placeholders", "questions/compile-backward"),
    ("boxed calling convention args.clear free activations", "questions/compile-backward"),
    ("torch.distributed.pipelining gradients between stages GPipe 1F1B",
     "questions/distributed-amp-compile"),
    ("memory grows library hooks store module outputs grad_input BackPACK", "questions/memory"),
    ("check_batched_grad Batching rule not implemented custom Function",
     "questions/gradcheck-options"),
    ("UnsafeViewBackward0 vs ViewBackward0 is it a view _base version counter",
     "questions/reading-gradients"),
    ("per-sample gradients expand weight bmm retain_grad", "questions/per-sample-gradients"),
    ("hessian of hinge loss is zero Newton method", "questions/higher-order"),
    ("second derivative LeakyReLU network zero", "questions/higher-order"),
    # hook leaks, in-place after optimizer.step(), non-leaf results, grad_fn, checklists
    ("loss becomes nan", "questions/nan-inf"),
    ("loss becomes nan on GPU after some steps", "questions/nan-inf"),
    ("why backward needs a vector", ("questions/backward-gradient", "tutorial/why-a-vector")),
    ("extreme memory usage backward", ("questions/memory", "questions/memory-leaks")),
    ("register_hook closure captures the tensor memory leak weakref", "questions/memory"),
    ("full backward hook create_graph memory leak", "questions/memory"),
    ("optimizer.step modified by an inplace operation second backward",
     "questions/backward-twice"),
    ("output 0 of AsStrided is at version 2 GAN two losses", "questions/graph-errors"),
    (".grad is None after view reshape slicing of a leaf", "questions/missing-gradients"),
    ("x.data.requires_grad = True no effect", "questions/missing-gradients"),
    ("what does grad_fn store next_functions AccumulateGrad", "questions/reading-gradients"),
    ("sum micro-batch losses then one backward memory", "questions/memory"),
    ("grad_fn still there after backward saved tensors freed", "questions/memory"),
    ("model.forward skips hooks", ("questions/api-contracts", "guide/hooks")),
    ("enable_input_require_grads gradient checkpointing frozen embeddings", "questions/memory"),
    ("softmax all -inf nan masked row", "questions/nan-inf"),
    ("log_softmax logsigmoid every input -inf", "questions/nan-inf"),
    ("keyword-only arguments autograd.Function forward", "questions/custom-functions-transforms"),
    ("grad mode inside custom Function backward create_graph", "questions/custom-functions"),
    ("can't assign Variable as its own grad", "questions/error-messages"),
    ("data set to a tensor that requires gradients must be floating point",
     "questions/error-messages"),
    ("remove a hook handle.remove", ("questions/hooks", "questions/module-hooks", "guide/hooks")),
    ("jacobian for a batch per example softmax block diagonal", "questions/per-sample-gradients"),
    ("mixed second derivative input then parameters gradient penalty",
     "questions/higher-order"),
    ("checkpoint warning at inference under no_grad eval mode", "questions/checkpointing"),
    ("DDP freeze unused parameters instead of find_unused_parameters",
     "questions/distributed-amp-compile"),
    ("pipelining stage input mask does not require grad", "questions/distributed-amp-compile"),
    ("autograd.grad between two outputs of a compiled function", "questions/compile"),
    ("torch.compile in-place update of a buffer in forward wrong gradients", "questions/compile"),
    ("save_for_backward intermediate tensor under torch.compile", "questions/compile-backward"),
    ("compiled autograd hook order several layers", "questions/compile-backward"),
    ("view reshape sparse COO tensor not implemented", "questions/sparse-layouts"),
    ("sparse gradient into dense parameter through a view", "questions/sparse-tensors"),
    ("memory of a sparse gradient huge embedding", "questions/sparse-tensors"),
    ("GCN sparse adjacency matrix gradient", "questions/sparse-tensors"),
    ("which vmap does gradcheck check_batched_grad use warnings", "questions/gradcheck-options"),
    ("is the backward compiled lazily at the first backward bw_compiler",
     "questions/compile-backward"),
    ("skip gradient checkpointing when not training", "questions/checkpointing"),
    ("jacobian of softmax for each sample in a batch", "questions/per-sample-gradients"),
    ("gradient penalty derivative with respect to weights create_graph",
     "questions/higher-order"),
    # the asker's own keywords, joined (questions no writer had seen)
    (("utils.checkpoint use_reentrant non-reentrant checkpoint gradient hooks called once "
      "autograd.grad"), "questions/checkpointing"),
    ("NaNs in torch.linalg.eigh backward eigh eigenvectors gradient nan",
     "questions/operator-gradients"),
    ("gradients for quantized models fake quantization quantized ops quantization aware training",
     "questions/discrete-sampling"),
    ("as_strided backward expand wrong gradient expanded tensor overlapping memory",
     "questions/operator-edge-cases"),
    (("DistributedDataParallel gradients not synced across ranks autograd crossing process "
      "boundaries mp.spawn sub-workers process group"), "questions/distributed-amp-compile"),
    ("gradcheck sgn forward-mode check_forward_ad", "questions/gradcheck-options"),
    ("torch.compile peak memory checkpoint layernorm gelu", "questions/compile-backward"),
    ("gradcheck torch.angle forward mode complex tensor GradcheckError", "questions/gradcheck-options"),
    (("jacobian of a neural network derivative with respect to weights derivative with respect "
      "to input"), "questions/jacobians"),
    ("torch.compile cumprod backward 100x slower eager mode", "questions/operator-edge-cases"),
    ("higher peak memory torch.compile backward logits kept alive fused backward",
     "questions/compile"),
    ("l1_loss gradgradcheck complex inputs", "questions/gradcheck-options"),
    # round 13 (questions/autograd-graph and neighbours): the asker's words, less common APIs
    ("requires_grad in autograd.Function forward output.requires_grad False setup_context",
     "questions/custom-functions"),
    ("quantization aware training custom backward not differentiable round",
     "questions/custom-functions"),
    ("backpropagation gradient of the sum sum of gradients error function all inputs",
     ("questions/what-backward-computes", "guide/accumulation")),
    ("register_forward_hook grad_in grad_out hook_function", "questions/module-hooks"),
    ("FlopCounterMode autograd.grad _will_engine_execute_node", "questions/autograd-graph"),
    (("A leaf node was passed to _will_engine_execute_node but we are currently running "
      "autograd.grad(). This is currently not supported."), "questions/autograd-graph"),
    ("generate_vmap_rule vmap staticmethod autograd.Function",
     ("questions/custom-functions", "guide/custom-functions")),
    ("multi-grad hooks register_multi_grad_hook hook after all gradients",
     "questions/autograd-graph"),
    ("retain_grad on a view inplace on base view of view", "questions/graph-errors"),
    ("get_gradient_edge GradientEdge autograd.grad", "questions/autograd-graph"),
    ("increment_version custom kernel inplace write", "questions/autograd-graph"),
    ("disable_saved_tensors_hooks save_on_cpu error", "questions/autograd-graph"),
    ("allow_mutation_on_saved_tensors", "questions/graph-errors"),
    ("set_grad_enabled train eval phase", "questions/api-contracts"),
    ("stack_module_state ensemble gradients vmap", "questions/api-contracts"),
    ("print tensor inside vmap BatchedTensor value debug_unwrap", "questions/api-contracts"),
    ("unpack_dual UnpackedDualTensor primal tangent", "questions/api-contracts"),
    ("vmap inplace add_ output with shape doesn't match the broadcast shape functionalize",
     "questions/graph-errors"),
    # round 14 (questions/jacobian-api and neighbours): options of the derivative functions
    ("jacrev_with_value grad_and_value has_aux energies and forces", "questions/jacobian-api"),
    ("has_aux jacfwd jvp auxiliary objects", "questions/jacobian-api"),
    ("requires_grad=False BatchNorm2d running_mean running_var buffers",
     "questions/weights-not-updating"),
    ("freezing batch norm requires_grad = False running mean fine-tuning",
     "questions/weights-not-updating"),
    ("frozen model BatchNorm2d trainable freeze backbone transfer learning",
     "questions/weights-not-updating"),
    ("save_for_backward docs saved_tensors no_grad mode ctx methods",
     "questions/function-ctx"),
    ("save_for_backward None backward too many grad_inputs",
     ("questions/custom-functions", "questions/api-contracts")),
    ("AddAuxiliaryLoss aux loss gradient grad constantly 1 torch.autograd.Function",
     "questions/custom-functions"),
    ("forward-mode AD custom function jvp segfault non-tensor argument make_dual",
     "questions/custom-functions-transforms"),
    ("detect_anomaly double backward uninformative forward trace nan in 2nd backward",
     "questions/nan-debugging"),
    ("make_dual tensor subclass tangent LoggingTensor forward AD",
     "questions/error-messages-func"),
    # round 14 (linear algebra, indexing, compile, AMP, DDP/FSDP): the asker's words
    ("linalg.lstsq residuals no gradient gels driver", "questions/linalg"),
    ("linalg.lstsq backward 1-D B Dimension out of range", "questions/linalg"),
    ("linalg.lstsq forward-mode jacobian vectorize=True mat1 and mat2 shapes cannot be multiplied",
     "questions/linalg"),
    ("torch.lstsq derivative not implemented differentiable least squares QR",
     "questions/linalg"),
    ("linalg.lstsq gradcheck Jacobian mismatch tall inputs gelsy", "questions/linalg"),
    ("which linalg outputs have a gradient slogdet sign lu_factor pivots info",
     "questions/linalg"),
    ("index_put_ index_backward nondeterministic CPU accumulate=True", "questions/indexing-masking"),
    ("gather backward faster integer indexing backward x[idx]", "questions/indexing-masking"),
    ("MultiheadAttention key_padding_mask attn_mask gradients become NaN -inf softmax",
     "questions/indexing-masking"),
    ("torch.compile checkpoint use_reentrant=False recompute working set peak memory shared blocks",
     "questions/compile-backward"),
    ("checkpoint over compile use_reentrant=False compiled function same gradients",
     "questions/compile-backward"),
    ("forward-AD dual tensor torch.compile tangent dropped unpack_dual inductor", "questions/compile"),
    ("scale_loss multiple losses weighted sum loss backward separately", "questions/amp"),
    ("DDP Grad strides do not match bucket view strides gradient layout contract 1x1 conv",
     "questions/warning-messages"),
    (("UserWarning: Grad strides do not match bucket view strides. This may indicate grad was "
      "not created according to the gradient layout contract"), "questions/warning-messages"),
    ("FSDP clip_grad_norm_ gradient clipping sharded parameters FSDP2 fully_shard",
     "questions/distributed-amp-compile"),
    # warnings pasted verbatim (questions/warning-messages)
    ("FutureWarning: `grad_variables` is deprecated. Use `grad_tensors` instead.",
     "questions/warning-messages"),
    ("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated",
     "questions/warning-messages"),
    ("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead",
     "questions/warning-messages"),
    ("UserWarning: CUDA is not available or torch_xla is imported. Disabling autocast.",
     "questions/warning-messages"),
    ("We've integrated functorch into PyTorch functorch.vmap is deprecated",
     "questions/warning-messages"),
    # does an autograd feature work under torch.compile (the support matrix)
    ("register_hook torch.compile", ("questions/compile-support", "questions/compile")),
    ("double backward compiled model", ("questions/compile-support", "questions/compile")),
    ("torch.compile with aot_autograd does not currently support double backward",
     ("questions/compile-support", "questions/compile")),
    ("retain_grad torch.compile silently uncompiled", "questions/compile-support"),
    ("register_full_backward_hook torch.compile", ("questions/compile-support",
                                                    "questions/compile")),
    ("fullgraph=True Unsupported torch.autograd.grad", ("questions/compile-support",
                                                         "questions/compile")),
    ("requires_grad_ inside torch.compile function", "questions/compile-support"),
    ("forward AD dual tensor make_dual torch.compile", "questions/compile-support"),
    ("RuntimeError: Nested forward mode AD is not supported at the moment",
     "questions/higher-order"),
    ("hessian vs jacfwd(jacrev) vs jacrev(jacrev) same result", "questions/jacobian-api"),
    ("make_dual on a slice of a tensor base has no tangent", "questions/jacobians"),
    ('custom Function inplace forward output is input not leaf b.grad None', 'questions/api-contracts'),
    ('mark_dirty y is x relu_ in forward inconsistent', 'questions/api-contracts'),
    ('clip_grad_norm negative max_norm reverse all the gradients', 'questions/api-contracts'),
    ('jacrev jacfwd torch.roll scalar input IndexError: Dimension out of range', 'questions/error-messages-func'),
    ('jacrev jacfwd indexing torch.tensor of elements INTERNAL ASSERT FAILED', 'questions/error-messages-func'),
    ("functional_call jacrev argnums=1 AttributeError: 'Linear' object has no attribute 'dtype'", 'questions/error-messages-func'),
    ('MSELoss different dtype jacobian vectorize=True Found dtype Double but expected Float', 'questions/error-messages-func'),
    ('matrix to matrix function custom autograd Function grad_output * 2*input chain rule', 'questions/custom-functions'),
    ('saved_tensors_hooks pack_hook unpack_hook skip conv parameters', 'questions/autograd-graph'),
    ('quantization of saved tensors saved_tensors_hooks', 'questions/autograd-graph'),
    ('mask save computation nn.Bilinear some entries', 'questions/what-backward-computes'),
    ('torch.atan2 backward float16 inf gradient forward mode differs', 'questions/nan-inf'),
    ('FP16 backward create_graph=True nan gradients loss scale', 'questions/nan-inf'),
    ("gradient clipping NaN clip_grad_norm_ before optimizer.step reducing the grads",
     ("questions/nan-inf", "questions/distributed-amp-compile")),
    ('torch.func jacobian OOM functorch_jacobians out of memory', 'questions/jacobian-api'),
    ("derivative of model outputs w.r.t input features Jacobian matrix 784x10",
     ("questions/jacobians", "guide/whole-jacobians")),
    # what each rank's .grad holds under DDP, FSDP1 and FSDP2
    ("loss.backward() reduce_loss.backward() distributed all reduce loss", "questions/fsdp-ddp"),
    ("FSDP different gradient compared with DDP sharding gradient values", "questions/fsdp-ddp"),
    (("do not reshard after forward SHARD_GRAD_OP all-gather during backward entire model in "
     "memory FSDP"), "questions/fsdp-ddp"),
    ("FSDP reduce-scatter gradient size world size no_sync gradient memory footprint",
     "questions/fsdp-ddp"),
    (("unsharded grads p.grad use_orig_params=True summon_full_params gradient norms size-0 "
     "empty tensor"), "questions/fsdp-ddp"),
    # nested (jagged) tensors and padding_idx
    ("nested tensor NJT linear attention _nested_sum_backward sum(dim=1)",
     "questions/nested-tensors"),
    ("NotImplementedError: aten._nested_sum_backward.default", "questions/nested-tensors"),
    ("NestedTensor index nt[0] requires_grad", "questions/nested-tensors"),
    ("jagged nested tensor unbind nn.Linear backward", "questions/nested-tensors"),
    ("padding_idx Embedding gradient not zero GPU weight.grad[0] longer than 768",
     "questions/indexing-masking"),
    ("embedding padding_idx jacobian forward-mode reverse mode different jacobians",
     "questions/indexing-masking"),
    # why a backward is slow
    ("loss.backward() slow 20s computational graph repeat unsqueeze", "questions/memory"),
    ("loss.backward() 10 times network.forward() time backward slower than forward",
     "questions/memory"),
    # sparse COO: an operation without a sparse kernel, a slow sparse backward
    ("sparse_coo optimizer NotImplementedError pred.backward() error", "questions/sparse-tensors"),
    (("slow backpropagation CPU torch.sparse.FloatTensor matmul sparse matrix back propagation "
     "done in"), "questions/sparse-tensors"),
    # torch.compile: jacfwd, vmap, data-dependent guards, compiled autograd, custom Functions
    ("jacfwd one_hot torch.compile dynamic=True argnums=(0,) works eager fails compiled",
     "questions/compile-backward"),
    ("torch.compile vmap jacfwd Newton-Raphson undistort error", "questions/compile-backward"),
    ("torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call",
     "questions/compile-backward"),
    ("torch.compile aot_autograd dynamic fullgraph backward compile GuardOnDataDependentSymNode",
     "questions/compile-backward"),
    ("Compiled Autograd implicit dtype cast bf16 fp32 validate_outputs dtype mismatch",
     "questions/compile-backward"),
    ("torch.compile autograd.Function torch.no_grad tensor parallel fails",
     "questions/compile-backward"),
    ("mutating a buffer requires_grad-ness torch.compile backward error", "questions/compile"),
    # torch.func with hooks and custom Functions; custom ops; grad mode in custom code
    ("torch.func.jvp custom Function jvp staticmethod setup_context", "questions/func-hooks"),
    ("functorch.jvp inside autograd.Function forward", "questions/func-hooks"),
    ("vmap full_backward_hook register_full_backward_hook functorch", "questions/func-hooks"),
    ("per-sample gradient intermediate layer vmap backward hook", "questions/func-hooks"),
    ("print in backward BatchedTensor is_grads_batched", "questions/func-hooks"),
    ("Batching rule not implemented for aten::is_nonzero", "questions/func-hooks"),
    ("torch.library.register_autograd custom_op backward setup_context",
     "questions/custom-ops"),
    ("no autograd formula was registered register_autograd", "questions/custom-ops"),
    ("register_kernel register_autograd custom_op CPU CUDA", "questions/custom-ops"),
    ("an autograd kernel was not registered to the Autograd key(s)", "questions/custom-ops"),
    ("torch.ops custom C++ op backward requires_grad false", "questions/custom-ops"),
    ("custom_op torch.is_grad_enabled() is False register_autograd", "questions/custom-ops"),
    ("view requires_grad True into False inference_mode", "questions/grad-mode"),
    ("Inference tensors cannot be saved for backward inference_mode decorator training",
     "questions/grad-mode"),
    ("inference tensor grad_fn custom Function inference_mode inside forward",
     "questions/grad-mode"),
    ("enable_grad autograd.grad inside backward of torch.autograd.Function",
     "questions/grad-mode"),
    ("autograd.Function requires_grad=False inside forward enable_grad inference_mode",
     "questions/grad-mode"),
    ("forward hook detach style transfer gradient", "questions/module-hooks"),
    # torch.func.vjp and jvp: cotangent shapes, batching, in-place views, rounding, DDP
    ("functorch vjp silently incorrect copy_ diagonal in-place copy into view",
     "questions/vjp-jvp"),
    ("vmap x jvp torch.cov nested vmap jvp inside vmap", "questions/vjp-jvp"),
    ("torch.func.jvp DistributedDataParallel jvp after backward fails", "questions/vjp-jvp"),
    ("DDP jvp Cannot access data pointer of Tensor that doesn't have storage",
     "questions/vjp-jvp"),
    ("torch.func.jvp different output layer_norm hessian vector product primal output mismatch",
     "questions/vjp-jvp"),
    ("vjp_fn Mismatch in shape: grad_output[0] grad of grad vector-Jacobian product shape",
     "questions/vjp-jvp"),
    ("torch.autograd.functional.vjp vmap returns 0 gradients BatchedTensor", "questions/vjp-jvp"),
    ("jvp through vmap stack_module_state functional_call ensemble heads", "questions/vjp-jvp"),
    # compiling vjp_fn, a no_grad view output, torch.export of a training step
    ("torch.compile vjp_fn compiled vjp returns zeros", "questions/compile-support"),
    (("torch.compile no_grad view element 1 of tensors does not require grad and does not "
      "have a grad_fn AOTAutograd"), "questions/compile-support"),
    ("torch.export capture backward graph Tensor.backward training", "questions/compile-support"),
    ("multiple backward() in parallel threads cpu execution is serialized",
     "questions/api-contracts"),
    ("hessian returns zeros torch.autograd.functional.hessian perturbation of weights",
     ("questions/jacobian-api", "guide/torch-func")),
    ("max_pool2d_with_indices_backward indices CPU CUDA inconsistent",
     "questions/linalg-fft-pooling"),
    ("AdaptiveMaxPool2d return_indices indices format double backward",
     "questions/linalg-fft-pooling"),
    ("gradcheck complex valued functions Wirtinger gradgradcheck", "questions/gradcheck-options"),
    (("a view of a leaf Variable that requires grad is being used in an in-place operation "
      "new version of PyTorch"), "questions/graph-errors"),
    # what detach() changes, and when .grad is filled
    ("circle loss detaching sp and sn clamp_min gradient graph", "questions/detach-grad"),
    ("detach delta.grad delta_norm adversarial training embeds_init", "questions/detach-grad"),
    ("detach memory anchors gradient history old batches XBM", "questions/detach-grad"),
    ("query_points.detach() truncate the regression gradient each layer", "questions/detach-grad"),
    ("Tensor.grad None by default accumulate future calls to backward", "questions/detach-grad"),
    ("retains_grad non-leaf grad populated backward", "questions/detach-grad"),
    # round 12's records: the asker's keywords, joined (the entries written for them)
    (("torch.matrix_exp's own backward embeds the operator into a (2N,2N) block matrix "
      "Frechet derivative torch.autograd.Function wrapping the existing call peak memory"),
     "questions/linalg"),
    (("einsum how the tensor gradient is calculated when using the einsum operator grad_fn "
      "of a it is some view backward bmm"), "questions/linalg-fft-pooling"),
    (("setattr() on Tensor.requires_grad graph break Mutating requires_grad can introduce a "
      "new leaf from non-leaf AOTAutograd does not currently know how to handle"),
     "questions/compile-support"),
    (("[torch.compile] autograd.Function with .set_materialize_grads raises Supports "
      "ctx.set_materialize_grads when we trace the backward, we assume that all of the "
      "gradients are Tensors inline in skipfiles: FunctionCtx.set_materialize_grads"),
     "questions/compile-support"),
    (("MixedPrecisionPolicy(reduce_dtype=...) reduce_dtype is documented to apply to "
      "gradient reduction (reduce-scatter or all-reduce) reducing gradients in fp32 keep "
      "gradients in reduced precision casts gradients back to the parameter full precision "
      "type"), "questions/fsdp-ddp"),
    (("Add testing for forward over reverse gradgrad check_fwd_over_rev check_rev_over_rev "
      "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"),
     "questions/gradcheck-options"),
    (("loss_total = alpha*loss_1 + (1-alpha)*loss_2 balance different loss term loss_total "
      "seems to be dominated by loss_1 optimize the alpha automatically"),
     "questions/backward-gradient"),
    (("type conversion differentiable .float() For long it seems like the operation does "
      "not have a grad_fn mask based on comparison"), "questions/operator-edge-cases"),
    (("Fix as_strided_backward as_strided_backward Detecting Memory Overlap Within A "
      "Strided Tensor expand this needs to check for src overlap too"),
     "questions/operator-edge-cases"),
    (("requires_grad attribute By default ... requires_grad attribute is set to False "
      "requires_grad=True requires_grad_()"), "questions/weights-not-updating"),
    (("offload_to_cpu=True checkpoint_wrapper offload_wrapper offload the rest of "
      "activations to CPU save_on_cpu"), "questions/memory-leaks"),
    (("offload tensors to CPU memory during the forward pass prev_tensor.to('cpu', "
      "non_blocking=True) torch.autograd.graph.save_on_cpu() no significant reduction in "
      "GPU memory usage"), "questions/memory-leaks"),
    (("grad_dtype Access/setting is leaf-only Engine casts incoming grad to tensor's dtype "
      ".grad must match tensor's dtype"), "questions/accumulation-memory"),
    (("backward does not return gradient w.r.t. exponent return modeig_backward(...), None "
      "no gradient is propagated back to self.weight matrix_power.apply"),
     "questions/api-contracts"),
    (("When to use implement a custom function if you want to perform computations in your "
      "model that are not differentiable or rely on non-Pytorch libraries (e.g., NumPy) "
      "consider using function or module hooks How to use"), "questions/api-contracts"),
    (("Improve hooks ordering behavior pre-hooks registered on tensor to run before "
      "pre-hooks registered on grad_fn retains grad hooks always execute last Post hooks "
      "(and pre hooks) can now observe the modifications to gradient by the tensor pre hook"),
     "questions/hooks"),
    (("Add a linearize like jax.linearize compute forward-mode AD multiple times without "
      "re-evaluating f(x) A workaround is to use jvp linearize transform"), "questions/jacobians"),
    (("torch.autograd.functional.jacobian torch.det(J) log|det Jacobian| "
      "log_abs_det_jacobian change of variables"), "questions/jacobians"),
    (("BatchGradientVerification Mixes data across batch dimension BatchNorm1d always "
      "returns False when there are BatchNorm layers"), "questions/per-sample-gradients"),
    (("gradient synchronization BEFORE Gradient Sync AFTER Gradient Sync all_reduce + "
      "averaging every GPU has the exact same gradient consistency check"), "questions/fsdp-ddp"),
    # round 13's records: the asker's keywords, joined (the entries written for them)
    (("DTensor redistribute backward gradient placement grad_placements Partial gradient "
      "in backward redistribute backward Replicate"), "questions/dtensor"),
    (("from_local backward Partial from_local gradient Replicate partial to replicate in "
      "backward grad_placements from_local"), "questions/dtensor"),
    (("to_local grad_placements to_local backward gradient grad placement passthrough "
      "param Replicate grad Partial"), "questions/dtensor"),
    (("local_map in_grad_placements gradient placement local_map in_placements "
      "out_placements DTensor input gradient placement"), "questions/dtensor"),
    (("redistribute backward_dtype forward_dtype cast the gradient before the backward "
      "collective DTensor gradient dtype"), "questions/dtensor"),
    (("compiled_autograd dynamic shapes compiled autograd recompile backward dynamic=True "
      "backward recompiles compiled_autograd.enable"), "questions/compile-backward"),
    (("native_layer_norm_backward recompile dynamic=True specializes batch dimension "
      "guard size mismatch at index 0 autograd.grad create_graph make_fx symbolic"),
     "questions/compile-support"),
    (("compile backwards graph immediately AOTAutograd lazy backward compilation dynamic "
      "shapes backward guards bw_compiler called during forward"), "questions/compile-backward"),
    (("register_hook inside torch.compile hooks on intermediate tensors compile "
      "register_hook input tensors dynamo backward hook compiled function"), "questions/compile"),
    (("Dynamo autograd.Function mark_non_differentiable mark_non_differentiable "
      "torch.compile non differentiable output requires_grad False fullgraph custom "
      "Function"), "questions/compile-support"),
    (("mark_non_differentiable aliased outputs x.grad stays None torch.compile detach "
      "output compiled views disconnected does not require grad inductor"),
     "questions/compile-support"),
    (("DDP static_graph not compatible with static_graph set to True Your training graph "
      "has changed in this iteration find_unused_parameters _set_static_graph"),
     "questions/fsdp-ddp"),
    (("static graph forward called multiple times before backward static_graph two "
      "forwards one backward Your training graph has changed in this iteration "
      "num_iterations_ reducer static graph"), "questions/fsdp-ddp"),
    (("DDP multiple backwards retain_graph DDP second backward DDP support for multiple "
      "backward passes gradients not synchronized second backward"), "questions/fsdp-ddp"),
    (("compiled autograd backward inputs backward(inputs=) torch.compile "
      "compiled_autograd .backward(inputs=) accumulate grad only inputs compiled"),
     "questions/compile-backward"),
    (("hypergradient learning rate differentiate through optimizer update gradient of loss "
      "with respect to step size optimizer.step differentiable"),
     "questions/weights-not-updating"),
    (("gradient of the loss function with quantiles torch.quantile differentiable quantile "
      "non-differentiable sort and interpolation backward"),
     "questions/operator-edge-cases"),
    (("parametrizations orthogonal gradient project the gradients weight matrix is "
      "constrained gradient clipping component outside the set"),
     "questions/weights-not-updating"),
    (("logdet slogdet backward gradient of log determinant logdet singular matrix gradient "
      "logdet nan negative determinant"),
     "questions/linalg"),
    (("custom_op non-differentiable register_autograd non-differentiable no autograd "
      "formula was registered mark an operator as non-differentiable"),
     "questions/custom-ops"),
    (("custom Function differentiable Integer output mark_non_differentiable integer "
      "output argmax indices autograd.Function non-differentiable outputs backward zero"),
     "questions/function-ctx"),
    (("forward-mode AD autograd.Function non-differentiable output INTERNAL ASSERT FAILED "
      "autograd_meta.cpp jvp return None mark_non_differentiable Expected both tensor and "
      "its forward grad to be floating point or complex"),
     "questions/vjp-jvp"),
    (("BERT input gradient gradient with respect to input_ids inputs_embeds requires_grad "
      "only Tensors of floating point dtype can require gradients gradient w.r.t. one-hot "
      "encoded inputs"),
     "questions/reading-gradients"),
    (("customized backward function extra time consumption custom Function backward slow "
      "Function.apply inside backward time consumption of forward and backward process"),
     "questions/memory"),
    (("gumbel_softmax hard=True gradient straight-through trick y_hard - y_soft.detach() + "
      "y_soft differentiated as if it is the soft sample"),
     "questions/discrete-sampling"),
    (("forward-mode AD dropout jvp dropout native_dropout tangent dropout mask scale "
      "1/(1-p)"),
     "questions/jacobians"),
    (("batch_norm_jvp running_mean running_var forward grad batch_norm is not "
      "differentiable wrt running_mean and running_var forward-mode AD batch norm eval "
      "make_dual running stats"),
     "questions/jacobians"),
    (("batch_norm second-order JVP incorrect jvp of jvp batch_norm forward-over-forward "
      "batch norm nested forward-mode second derivative"),
     "questions/jacobian-api"),
    # round 14's records: the asker's keywords, joined (the entries written for them)
    (("ExpandedWeights tied weights call_for_per_sample_grads per-sample gradients shared "
      "parameter embedding output layer same weight"),
     "questions/per-sample-gradients"),
    (("nested jagged tensor backward NJT broadcast multiply backward error reducing along a "
      "ragged and non-batch dimension torch.nested jagged per-sample weight"),
     "questions/nested-tensors"),
    (("nn.Embedding backward nested tensor NJT embedding_dense_backward jagged layout "
      "embedding gradient nested tensor embedding not implemented"),
     "questions/nested-tensors"),
    (("to_padded_tensor backward torch.nested.narrow contiguous backward invalid gradient "
      "expected shape compatible with [3, j2] nested_tensor_from_jagged offsets"),
     "questions/nested-tensors"),
    (("nested tensor mean var NJT mean dim=-1 backward nested tensor reduction gradient "
      "layer_norm nested tensor"),
     "questions/nested-tensors"),
    (("gradient with respect to activation values Hessian-vector product autograd.grad "
      "grad_outputs intermediate values hooks grad of grad activations"),
     "questions/hessians"),
    (("forward AD not implemented Trying to use forward AD with that does not support it dual"
      " tensor unsupported operator jacfwd jvp unsupported op"),
     "questions/error-messages-func"),
    (("forward AD maximum minimum float32 expected scalar type double but found float "
      "make_dual torch.max two tensors fmax fmin forward AD"),
     "questions/vjp-jvp"),
    (("make_dual integer tensor Expected primal to be floating point or complex forward AD "
      "tangent dtype dual tensor int64"),
     "questions/error-messages-func"),
    (("sparse gradient is_coalesced False coalesced flag lost backward autograd.Function "
      "sparse COO gradient sparse grad coalesce"),
     "questions/sparse-tensors"),
    (("Trying to backward through the graph a second time second iteration backward "
      "error targets require grad synthetic data requires_grad=True"),
     "questions/backward-twice"),
    (("Trying to backward through the graph a second time two losses same graph "
      "retain_graph=True GAN detach fake"),
     "questions/backward-twice"),
    (("requires_grad False inside training loop weight still updated freeze after "
      "optimizer created optimizer.step frozen parameter"),
     "questions/weights-not-updating"),
    (("saved_tensors_hooks unpack order pack_hook unpack_hook order reverse of packing "
      "order saved tensor hooks ordering"),
     "questions/autograd-graph"),
    (("flex_attention backward CPU FlexAttention does not support backward on CPU flex "
      "attention requires_grad CPU flex_attention gradient"),
     "questions/compile-support"),
    (("volatile=True Variable deprecated volatile was removed and now has no effect "
      "inference without gradients"),
     "questions/grad-mode"),
    (("GradScaler underflow mixed precision gradients zero loss scaling float16 "
      "scaler.scale(loss).backward()"),
     "questions/amp"),
    (("DDP no_sync gradient accumulation find_unused_parameters parameters unused in "
      "last micro-batch not synced stochastic depth DDP grad accumulation"),
     "questions/fsdp-ddp"),
    # round 15's records: the asker's keywords, joined (the entries written for them)
    (("jacobian vectorize=True strategy forward-mode out of memory after some iterations "
      "autograd.functional.jacobian slow forward-mode jacobian memory"),
     "questions/jacobian-api"),
    ("retain_grad position retain_grad in-place non-leaf grad wrong y.grad changes",
     "questions/hooks"),
    (("grad accum test fails amp_bf16 bfloat16 autocast gradient accumulation gradient "
      "mismatch bf16 accumulated gradients precision"),
     "questions/amp"),
    (("gradcheck forces float32 gradcheck numerical jacobian dtype gradcheck double precision "
      "gradcheck fails float32"),
     "questions/sparse-gradcheck"),
    (("LogSoftmax can only be differentiated once double backward CrossEntropyLoss "
      "create_graph=True cross entropy gradient penalty log_softmax"),
     "questions/higher-order"),
    # round 16's records (B): the asker's keywords, joined (the entries written for them)
    (("(t_l_loss+t_mpl_loss).backward() sum two losses and call backward() meta pseudo "
      "label teacher student how does backward of a sum of losses work"),
     "questions/weights-not-updating"),
    (("Hessian w.r.t inputs differs from functorch has_aux jacrev return the jacobian vmap "
      "hessian per sample hessian functorch vs autograd.grad"),
     "questions/jacobian-api"),
    (("create_graph=True Hessian memory Hessian loop same peak memory as vmap inference "
      "Hessian create_graph=False memory-efficient hessian loop"),
     "questions/memory-leaks"),
    (("F.normalize NaN gradient normalize p=1 nan gradient norm p=1 gradient at zero "
      "dividing by the sum works"),
     "questions/operator-edge-cases"),
    (("gradients contaminated by unused inputs nan gradient although output does not "
      "depend on nan unused nan entries linear weight grad nan slice output nan gradient"),
     "questions/indexing-masking"),
    (("forward AD operators not implemented in Python 3.11 wheel functorch.hessian Softmax "
      "error hessian LogSoftmax python 3.11 jacfwd not implemented"),
     "questions/error-messages-func"),
    # round 16's records (A): the asker's keywords, joined (the entries written for them)
    (("register_full_backward_hook c10d torch.compile error Failed running call_method copy_ "
      "AsStridedBackward0 dist.all_reduce in forward backward hook compile "
      "_c10d_functional::wait_tensor autograd kernel was not registered"),
     "questions/compile-support"),
    (("custom_op backward changes torch.compile cache register_autograd stale gradient "
      "torch.compile rm -r /tmp/torchinductor_root custom op backward not invalidating cache"),
     "questions/compile"),
    (("mutating backward input of autograd function torch.compile grad1.copy_(grad2) in "
      "backward autograd.Function backward inplace fullgraph Mutating backward input is not "
      "supported"),
     "questions/compile-support"),
    (("Expected to have finished reduction in the prior iteration multiple "
      "DistributedDataParallel model RuntimeError forward output not used in loss DDP which "
      "parameters are unused DDP"),
     "questions/fsdp-ddp"),
    (("Error using DDP for parameters that do not need to update gradients "
      "DistributedDataParallel frozen network DDP module without parameters requiring grad "
      "perceptual loss netF DDP"),
     "questions/fsdp-ddp"),
    (("expand_as gradient back prop expand gradient accumulated size 1 dimension expand vs "
      "repeat gradient gradient of expanded tensor shape"),
     "questions/operator-gradients"),
    (("ConvTranspose2d stride 2 wrong gradient CPU conv_transpose2d backward incorrect "
      "SlowConvTranspose2DBackward transposed convolution gradcheck"),
     "questions/operator-gradients"),
    (("conv_transpose2d usage in custom backward conv2d input gradient stride 2 "
      "output_padding relevance propagation conv_transpose2d torch.nn.grad.conv2d_input"),
     "questions/custom-functions"),
    (("torch.quantile gradient tied values quantile gradient mismatch eager inductor median "
      "backward ties quantile backward which element"),
     "questions/operator-edge-cases"),
    (("autograd.grad multiple input tensors gradient with respect to multiple inputs input "
      "not used in the graph allow_unused The differentiated Tensor at index 1 appears to not"
      " have been used in the graph"),
     "questions/api-contracts"),
    (("jacrev argnum select differentiation argument jacrev function with multiple arguments "
      "vmap jacrev argnums jacobian with respect to second argument"),
     "questions/jacobian-api"),
    (("jacrev pytrees inputs outputs jacrev dict input jacobian of function returning dict "
      "jacfwd tuple input"),
     "questions/jacobian-api"),
    (("jacrev argnums typing Tuple[int, ...] argnums optional None jacrev jacfwd argnums "
      "tuple of ints argnums must be int or Tuple[int, ...]"),
     "questions/error-messages-func"),
    (("max_unpool wrong gradient duplicate indices MaxUnpool inconsistent gradient "
      "max_unpool1d gradcheck Jacobian mismatch max_unpool non-deterministic"),
     "questions/indexing-masking"),
    (("MaxPool3d deterministic backward max_pool3d_with_indices_backward_cuda does not have a"
      " deterministic implementation MaxPool3d not reproducible gradient "
      "use_deterministic_algorithms max pool"),
     "questions/indexing-masking"),
    (("vjp fails for models with buffers functional_call buffers batchnorm vjp "
      "make_functional_with_buffers vjp error only Tensors of floating point dtype can "
      "require gradients"),
     "questions/api-contracts"),
    (("linalg.solve gradient 1x1 matrix LinalgSolveExBackward0 returned an invalid gradient "
      "shape error gradients linalg.solve solve vector right-hand side backward"),
     "questions/linalg"),
    (("SolveBackward returned nan values torch.solve backward nan linalg.solve gradient nan "
      "singular matrix Function 'LinalgSolveExBackward0' returned nan values in its 0th output"),
     "questions/nan-debugging"),
    (("singular matrix during backward pass linalg.solve singular custom backward implicit "
      "differentiation solve singular torch.linalg.solve: (Batch element 13): The solver failed"
      " because the input matrix is singular."),
     "questions/linalg"),
    (("efficient contraction path backward efficient einsum backward memory opt_einsum contract"
      " pytorch autograd einsum backward cost"),
     "questions/linalg-fft-pooling"),
    (("fsdp2 grad_dtype lost fully_shard FSDP2 gradient dtype bfloat16 instead of float32 "
      "fully_shard grad_dtype property reduce_dtype float32 gradients"),
     "questions/fsdp-ddp"),
    (("amp.custom_fwd library.custom_op custom_op autocast backward dtype mismatch custom_bwd "
      "register_autograd torch.library.register_autocast"),
     "questions/amp"),
    (("register_multi_post_accumulate_grad_hook hook after all parameters gradients accumulated"
      " multi grad hook .grad not yet populated register_post_accumulate_grad_hook group of "
      "tensors"),
     "questions/autograd-graph"),
    (("backward vs autograd.functional.jacobian discrepancy gradients differ 1e-9 float32 "
      "precision problem back-propagation inp.grad == jac not equal"),
     "questions/accumulation-memory"),
    (("find input that maximizes output gradient of output with respect to input gradient "
      "ascent on input keep model parameters fixed optimize one of the model outputs"),
     "questions/weights-not-updating"),
    (("torch.func.grad uses more memory than autograd.grad functorch grad peak memory func.grad"
      " create_graph grad transform memory"),
     "questions/memory-leaks"),
    (("Hessian-vector product loop out of memory memory leak high order derivative "
      "autograd.grad create_graph=True memory Hv = torch.autograd.grad(inner_prod, parameters)"),
     "questions/memory-leaks"),
    (("torch.func don't yet support saved tensor hooks torch.func.grad inside checkpoint "
      "save_on_cpu with torch.func vmap gradient checkpointing error torch.func.{grad, vjp, "
      "jacrev, hessian} don't yet support saved tensor hooks. Please open an issue with your "
      "use case."),
     "questions/autograd-graph"),
    (("autograd consumes too much memory Newton-Schulz matrix square root backward memory "
      "iterative forward memory footprint checkpointing iterations"),
     "questions/memory-leaks"),
    (("jacfwd jacrev randomness different dropout hessian with dropout functorch vmap: called "
      "random operation while in randomness error mode randomness='same'"),
     "questions/jacobian-api"),
    (("gradcheck fail dropout2d gradcheck random function Jacobian mismatch dropout "
      "GradcheckError: Jacobian mismatch for output 0 with respect to input 0"),
     "questions/sparse-gradcheck"),
    (("differentiable argsort argsort gradient torchsort argsort soft rank sort indices no "
      "gradient"),
     "questions/operator-edge-cases"),
    (("tying weights different neurons weight sharing gradient sum same parameter two modules "
      "average gradients tied weights"),
     "questions/what-backward-computes"),
    (("bias gradient before batch normalization always zero bias grad zero BatchNorm bias "
      "gradient only weights update"),
     "questions/operator-gradients"),
    (("gradient of upper layer is zero lower layer gradients zero output bias gradient zero "
      "backpropagation chain rule zero gradient"),
     "questions/what-backward-computes"),
    (("checkpoint_sequential autograd.grad DistributedDataParallel DDP torch.autograd.grad not "
      "synchronized checkpoint incompatible with .grad() When use_reentrant=True, "
      "torch.utils.checkpoint is incompatible with .grad()"),
     "questions/checkpointing"),
    (("different gradients with and without checkpoint checkpoint BatchNorm checkpoint first "
      "layer dummy input running_mean updated twice"),
     "questions/memory"),
    (("gradient checkpointing mask zero rows masked assignment norm checkpoint torch.where norm "
      "zero gradient Recomputed values for the following tensors have different metadata than "
      "during the forward pass"),
     "questions/error-messages"),
    (("checkpoint_sequential segments greater than number of functions checkpoint_sequential "
      "unclear error range() arg 3 must not be zero segments argument"),
     "questions/error-messages"),
    (("GradScaler sparse gradients AMP sparse embedding _amp_non_finite_check_and_unscale_ "
      "SparseCUDA unscale sparse grad"),
     "questions/amp"),
    (("register_backward_hook Conv2d grad_in grad_out exact meaning of grad_input and "
      "grad_output grad_in[2] hook should return 3 objects modify conv kernel gradient"),
     "questions/module-hooks"),
    (("register_hook on feature vector gradient with respect to feature what is this gradient "
      "dL/dx use of gradient with respect to activation"),
     "questions/hooks"),
    (("create_graph=True vs retain_graph=True autograd.grad create_graph memory first-order "
      "approximation MAML replace create_graph with retain_graph meta gradient second order"),
     "questions/autograd-graph"),
    (("two successive inplace ReLU relu_ after relu backward error Error detected in "
      "ReluBackward0 ReLU(inplace=True) += is at version 2; expected version 1 instead"),
     "questions/error-messages"),
    (("gradient of tensor slice a[0] = value gradient zero slice assignment backward "
      "CopySlices gradient"),
     "questions/indexing-masking"),
    (("norm fails to compute grad in forward mode jacobian strategy forward-mode linalg.norm "
      "Could not allocate memory to change Tensor SizesAndStrides linalg.norm jvp"),
     "questions/linalg"),
    (("clip gradient norm chatbot tutorial how to choose clip value clip_grad_norm_ max_norm "
      "exploding gradients RNN"),
     "questions/nan-debugging"),
    (("fast gradcheck complex atol fast_mode complex inputs fails slow passes _adjusted_atol "
      "complex gradcheck fast_mode complex"),
     "questions/api-contracts"),
    (("autograd.Function assign Tensor directly to ctx graph breaks on operations on ctx attrs "
      "torch.compile fullgraph ctx attribute ctx.x_dim backward"),
     "questions/custom-functions-transforms"),
    (("compiled backward re-enter contextvars.Context cannot enter context is already entered "
      "AOTAutograd backward graph break contextvars torch.compile backward"),
     "questions/compile-support"),
    (("autograd.Function recompilation every iteration ctx.save_for_backward torch.compile "
      "recompile cache_size_limit custom Function graph re-compilation customized operator"),
     "questions/compile-support"),
    (("DDP unused parameters grad None DDP set grad to zero for unused params locally unused "
      "params DDP grad find_unused_parameters grad None weight decay momentum unused parameter "
      "DDP"),
     "questions/fsdp-ddp"),
    (("FSDP no_sync gradient accumulation memory gradient accumulation without no_sync "
      "set_requires_gradient_sync False sync_each_batch FSDP OOM"),
     "questions/fsdp-ddp"),
    (("autocast bfloat16 backward matmul fp16 backward inside autocast context autocast dtype "
      "backward ops bf16 autocast gradient dtype"),
     "questions/amp"),
    (("stochastic rounding bfloat16 bf16 weights small updates lost autocast bfloat16 fp32 "
      "master weights AdamW bfloat16 precision"),
     "questions/amp"),
    (("zero_grad intermediate variables grad of intermediate tensors inspect internal gradients "
      "retain_variables zero_grad only parameters"),
     "questions/accumulation-memory"),
    (("zero matrix initialization all zero grads relu network init zeros weights initialized to "
      "zero no learning"),
     "questions/weights-not-updating"),
    (("single forward vs double forward forward the same input twice two loss terms gradients "
      "differ batchnorm running stats"),
     "questions/accumulation-memory"),
    (("hessian vector product slow double backward 20x slower autograd.grad create_graph=True "
      "BatchNorm double backward second backprop time"),
     "questions/vjp-jvp"),
    (("hessian-vector product multiple times slower repeated autograd.grad retain_graph HVP "
      "timing GPU second HVP 10x slower"),
     "questions/vjp-jvp"),
    (("register_full_backward_hook not the same object full backward hook input tensor identity "
      "BackwardHookFunctionBackward module inputs outputs wrapped"),
     "questions/module-hooks"),
    (("scatter_add backward wrt src src larger than index scatter_add gradient src shape returned "
      "an invalid gradient at index 1"),
     "questions/indexing-masking"),
    (("CompiledFunctionBackward incorrect number of gradients custom backend training backward "
      "torch.compile new accelerator backward RuntimeError: function CompiledFunctionBackward "
      "returned an incorrect number of gradients (expected 3, got 2)"),
     "questions/custom-functions"),
    (("backprop through custom Function TypeError LQRStepFn backward backward takes positional "
      "arguments but were given forward returns multiple outputs backward arguments"),
     "questions/custom-functions"),
    (("torch.func.grad argnums tuple torch.compile grad higher order op TupleVariable argnums "
      "tuple compile AttributeError grad argnums multiple inputs"),
     "questions/error-messages-func"),
    (("DDP gradients not synchronized across ranks checkpoint use_reentrant=False DDP no_sync "
      "gradient accumulation gradient mismatch between ranks"),
     "questions/fsdp-ddp"),
    (("DDP expects same model across all ranks inconsistent 0 params LoRA adapter DDP multi-GPU "
      "rank 1 has 0 params requires_grad different on ranks"),
     "questions/fsdp-ddp"),
    (("retains_grad_hooks not implemented for compiled autograd compiled autograd retain_grad "
      "gradient of activation compiled backward retain_grad torch.compile backward"),
     "questions/func-hooks"),
    (("what is param.grad the gradient of param.grad batch of inputs sum of gradients of "
      "outputs gradient per sample summed"), "questions/what-backward-computes"),
    (("scatter_add_cuda_kernel does not have a deterministic implementation deterministic "
      "scatter_add use_deterministic_algorithms gather backward reproducible training CUDA"),
     "questions/indexing-masking"),
    (("anomaly detection distributed autograd dist_autograd.backward detect_anomaly rpc backward "
      "forward traceback returned nan values in its 0th output"),
     "questions/nan-debugging"),
    (("detect_anomaly element 0 of tensors debug backward with pdb which line causes error "
      "anomaly mode no traceback element 0 of tensors does not require grad and does not have "
      "a grad_fn"),
     "questions/nan-debugging"),
    (("detect_anomaly stops tracing back anomaly traceback does not show my code nan loss "
      "mixed precision No forward pass information available returned nan values in its 0th "
      "output"),
     "questions/nan-debugging"),
    (("nansum gradient nan nanmean backward nan gradient of nansum wrongly produces nan ignore "
      "nan in loss"),
     "questions/nan-debugging"),
    (("register_hook pass tensor to hook modify gradient based on weight values hook function "
      "receives only grad register_post_accumulate_grad_hook"),
     "questions/hooks"),
    (("interpret .grad in optimizer param_groups params grad how does optimizer get gradients "
      "loss.backward optimizer.step connection"),
     "questions/weights-not-updating"),
    (("backward_backward_input_impl not implemented tiny-cuda-nn eikonal loss double backward "
      "custom extension gradient penalty create_graph custom Function"),
     "questions/custom-functions-transforms"),
    (("gradcheck nondet_tol ignored check_batched_forward_grad nondeterministic batched "
      "gradient computation with forward-mode AD failed nondet_tol forward AD"),
     "questions/api-contracts"),
    (("gradcheck fast_mode atol fast gradcheck too lenient fast_mode scaled tolerance gradcheck "
      "fast_mode misses error"),
     "questions/api-contracts"),
    (("FSDP clip_grad_norm_ NO_SHARD gradient norm double counted FSDP total norm "
      "world_size clip_grad_norm_ FSDP vs DDP"), "questions/fsdp-ddp"),
    (("custom vmap staticmethod torch.compile autograd.Function vmap rule ignored vmap "
      "torch.compile autograd.Function compiled vmap different from eager"),
     "questions/custom-functions-transforms"),
    (("zero one input's gradient matrix multiply custom Function matmul backward gradient "
      "only for one input return None in backward"), "questions/custom-functions-transforms"),
    (("how autodiff works for matrix gradient of matrix multiplication elementwise or matrix "
      "rule MmBackward Jacobian of C with respect to A"), "questions/what-backward-computes"),
    (("pytorch gradient computation matmul A.grad equals B transpose gradient of matrix "
      "product backward with ones vs sum"), "questions/what-backward-computes"),
    (("compiled autograd recompile every iteration ApplyTemplateBackward cache miss custom "
      "autograd.Function torch.compile backward compiled_id creation across iterations"),
     "questions/func-hooks"),
    (("addmm sparse csr backward test_autograd_dense_output_addmm square matrix sizes "
      "output.backward(covector)"), "questions/sparse-layouts"),
    (("to_sparse backward to_sparse_csr gradient gradient through dense to sparse conversion "
      "masked_grad to_dense"), "questions/sparse-layouts"),
    ("matmul gradient", "questions/what-backward-computes"),
    ("gradient of matmul what does pytorch compute", "questions/what-backward-computes"),
    (("autograd.grad unused input runs whole backward allow_unused backpropagates anyway "
      "backward through unrelated branch appears to not have been used in the graph"),
     "questions/what-backward-computes"),
    (("register_full_backward_hook intermediate activation forward hook output autograd.grad "
      "full backward hook not called Captum target layer backward hook"),
     "questions/module-hooks"),
    (("No inf checks were recorded for this optimizer GradScaler step AssertionError optimizer "
      "no gradient this iteration scaler.step multiple optimizers"), "questions/amp"),
    (("compiled autograd retain_graph compiled_autograd backward twice retain_graph=True "
      "torch.compile backward Trying to backward through the graph a second time"),
     "questions/compile"),
    (("expected Tensor or tuple of Tensor (got NoneType) custom Function forward returns None "
      "retain_graph=True still error Trying to backward through the graph a second time"),
     "questions/custom-functions"),
    (("detach vs clone clone gradient flow detach().clone() deepcopy tensor requires_grad "
      "detach shares storage"), "questions/detach-grad"),
    (("jvp multiple inputs jvp tuple of tangents sum of jvp per input torch.func.jvp several "
      "primals"), "questions/vjp-jvp"),
    (("gradient_as_bucket_view DDP grad view of bucket detach_ gradient DDP error Can't detach "
      "views in-place"), "questions/fsdp-ddp"),
    (("sparse.mm backward slow sparse COO times sparse COO backward sparse sparse matmul "
      "gradient CPU backward much slower than forward"), "questions/sparse-tensors"),
    (("autograd.functional.hessian vector output error hessian expected scalar hessian all "
      "zeros round The Tensor returned by the function given to hessian should contain a "
      "single element"), "questions/jacobians"),
    (("torch.func.hessian multiple inputs hessian argnums hessian of function with two "
      "arguments hessian only works on functions that take a single input"),
     "questions/jacobian-api"),
    (("custom autograd.Function autocast backward dtype mismatch expected scalar type "
      "BFloat16 but found Float save_for_backward bf16 input fp32 weight torch.mm in "
      "backward under autocast expected m1 and m2 to have the same dtype, but got: "
      "c10::BFloat16 != float"),
     "questions/amp"),
    (("jacobian dot vector loss row sum of jacobian jvp loss on jacobian gradient with "
      "respect to weights jacrev jacfwd vmap jacobian penalty vector-Jacobian-vector"),
     "questions/vjp-jvp"),
    (("input tensor requires_grad does input need requires_grad=True output has grad_fn "
      "without requires_grad backward works without requires_grad on input torch.tensor "
      "requires_grad False default"),
     "questions/missing-gradients"),
    (("make_functional_with_buffers prune deepcopy pruned model error weight_mask buffer "
      "functional forward_pre_hooks make_functional Only Tensors created explicitly by the "
      "user (graph leaves) support the deepcopy protocol at the moment"),
     "questions/detach-grad"),
    (("find_unused_parameters=True DDP vs single gpu different results does "
      "find_unused_parameters change gradients unused parameters DDP Expected to have "
      "finished reduction in the prior iteration before starting a new one"),
     "questions/fsdp-ddp"),
    (("crow_indices requires_grad True sparse csr indices requires grad to_sparse_csr "
      "requires_grad only Tensors of floating point dtype can require gradients"),
     "questions/sparse-layouts"),
    (("torch_sparse SparseTensor grad SparseTensor has no grad attribute gradient of sparse "
      "tensor values sparse matrix requires_grad value"),
     "questions/sparse-layouts"),
    (("unpack_dual tangent None functionalize torch.func.functionalize forward AD "
      "forward-mode tangent lost dual tensor FunctionalTensor fused jvp kernel custom "
      "Function"),
     "questions/custom-functions-transforms"),
    (("hessian vector product autograd automatically backprop through gradient step "
      "create_graph HVP implementation pytorch second order gradient through optimization "
      "step torch.autograd.functional.hvp"),
     "questions/autograd-graph"),
    (("freeze part of weight matrix lower triangular weight mask requires_grad on masked "
      "elements of weight train only some elements of a parameter can't optimize a non-leaf "
      "Tensor"),
     "questions/hooks"),
    (("log(1 - softmax) nan custom loss nan gradient penalty on eos token probability "
      "log1p(-softmax) numerical instability logsumexp stable log(1 - p)"),
     "questions/nan-inf"),
    (("setup_context save_for_backward input returned as-is autograd.Function identity "
      "forward save input return x.view_as(x) custom Function save_for_forward input "
      "returned as output An input that has been returned as-is as output is being saved "
      "for backward"),
     "questions/custom-functions-transforms"),
    (("setup_context inputs default argument autograd.Function forward default value "
      "setup_context not enough values to unpack Function.apply optional argument returned "
      "an incorrect number of gradients (expected 2, got 1)"),
     "questions/custom-functions-transforms"),
    (("visualize loss.backward track operations during backward print backward graph "
      "grad_fn next_functions hooks to see gradients flow profile backward pass"),
     "questions/reading-gradients"),
    (("gradcheck fails cuda extension double grad_check.py cuda fails fminf fmaxf float32 "
      "double precision gradcheck Jacobian mismatch custom kernel float64"),
     "questions/custom-ops"),
    (("gradcheck warning The {}th input requires gradient gradcheck not double precision "
      "warning which input gradcheck float32 input warning index is not a double precision "
      "floating point or complex"),
     "questions/warning-messages"),
    (("checkpoint mask input does not require grad element 1 of tensors does not require "
      "grad and does not have a grad_fn use_reentrant checkpoint non-differentiable output "
      "checkpoint lengths tensor LSTM none of output has requires_grad=True, this "
      "checkpoint() is not necessary"),
     "questions/memory"),
    (("cdist double backward the derivative for '_cdist_backward' is not implemented cdist "
      "create_graph gradient penalty cdist compute_mode use_mm_for_euclid_dist second "
      "derivative of pairwise distance"),
     "questions/higher-order"),
    (("DTensor to_local from_local Partial gradient to_local grad_placements Partial "
      "DTensor round trip different gradient Partial placement backward wrong gradient"),
     "questions/dtensor"),
    (("DTensor torch.compile backward tangent placement compiled backward different "
      "gradient placement inductor assertion tangent DTensor DTensor layer_norm compile "
      "backward tangent DTensor different placement from forward output"),
     "questions/dtensor"),
    (("DTensor Partial gradient becomes Replicate unexpected all-reduce in backward "
      "DTensor non-contiguous gradient transpose DTensor parameter AccumulateGrad "
      "new_empty_strided Partial Replicate parameter Partial grad"),
     "questions/dtensor"),
    (("cdist backward wrong gradient p=1 _cdist_backward ignores p torch.cdist gradient p "
      "norm cdist gradcheck p=inf custom kernel overrides aten backward wrong gradient"),
     "questions/operator-gradients"),
    (("cdist gradient non-deterministic cdist backward garbage values cdist single row "
      "gradient cdist res[0, 0].backward() wrong x2.grad"),
     "questions/operator-gradients"),
    (("cdist backward 4d tensor Function CdistBackward returned an invalid gradient at "
      "index 0 cdist batch dimensions broadcasting gradient reshape to 3d before cdist"),
     "questions/operator-gradients"),
    (("REINFORCE Categorical log_prob gradient gradient with respect to probs Categorical "
      "distribution backpropagation rule multinomial distribution characteristic "
      "eligibility categorical policy dist.log_prob backward"),
     "questions/discrete-sampling"),
    (("Found dtype Double but expected Float loss.backward dtype Double Float target "
      "float64 model float32 numpy float64 target loss backward error x.float() y.float() "
      "in __getitem__"),
     "questions/amp"),
    (("more than one element of the written-to tensor refers to a single memory location "
      "expand in-place assignment backward error IIC loss clone expand Please clone() the "
      "tensor before performing the operation p_j[(p_j < EPS).data] = EPS"),
     "questions/graph-errors"),
    (("torch.autograd.functional.hessian vectorize=True out of memory Hessian computation "
      "blows up VRAM tried to allocate GiB hessian hessian vectorize memory exact Hessian "
      "thousands of parameters"),
     "questions/jacobian-api"),
    (("searchsorted differentiable searchsorted requires_grad INTERNAL ASSERT FAILED "
      "isDifferentiableType INTERNAL ASSERT bucketize gradient gradient through "
      "bucketization"),
     "questions/discrete-sampling"),
    (("opacus per example gradient before and after clipping grad_sample per-sample "
      "gradient clipping clipping norm weights and biases opacus access clipped per-sample "
      "gradients"),
     "questions/per-sample-gradients"),
    (("grad_fn hook order backward register_prehook on grad_fn start of backward order of "
      "grad_fn calls reverse grad_fn not defined in __torch_dispatch__ time backward of an "
      "op with hooks"),
     "questions/hooks"),
    (("masked_scatter_backward inductor torch.compile masked_scatter backward masked_select "
      "data-dependent shape masked_scatter fullgraph gradient"),
     "questions/compile-support"),
    (("set_grad_enabled not respected web server fastapi torch no_grad requires_grad True "
      "in request handler CUDA out of memory inference server grad mode thread local"),
     "questions/threads-and-grad-mode"),
    (("grad mode in backward hooks queue_callback grad mode callbacks run with proper grad "
      "mode worker threads is_grad_enabled inside hook create_graph grad mode"),
     "questions/threads-and-grad-mode"),
    (("set_multithreading_enabled still spawns autograd threads disable multithreaded "
      "backward backward runs on calling thread set_multithreading_enabled context manager "
      "function"),
     "questions/threads-and-grad-mode"),
    (("no_grad ignored parallel_for embedding_renorm_ grad_fn CopySlices thread local grad "
      "mode intra-op threads leaf gets grad_fn under no_grad nn.Embedding max_norm"),
     "questions/threads-and-grad-mode"),
    (("ThreadLocalState SavedTensorDefaultHooks enabled flag disable_saved_tensors_hooks "
      "thread local saved tensors hooks TLS not restored saved_tensors_hooks worker thread"),
     "questions/autograd-graph"),
    (("when to use ignore_index ignore_index 255 semantic segmentation does not contribute "
      "to the input gradient assertion t >= 0 && t < n_classes failed loss nan all targets "
      "ignored"),
     "questions/indexing-masking"),
    (("vmap pad reflect backward jacrev F.pad replicate batch rule reflection_pad backward "
      "functorch pad reflect per-sample gradient padding"),
     "questions/jacobian-api"),
    (("reflection_pad backward decomposition torch.compile F.pad reflect backward "
      "reflection_pad2d_backward inductor compiled padding gradient"),
     "questions/compile-support"),
    (("cudnn RNN backward can only be called in training mode LSTM backward eval mode CUDA "
      "Grad-CAM LSTM model.eval() integrated gradients LSTM cudnn backward_input can only "
      "be called in training mode"),
     "questions/grad-mode"),
    (("__torch_function__ torch.autograd.backward tensor subclass backward override "
      "torch.autograd.backward tensor-subclasses handle_torch_function backward"),
     "questions/backward-gradient"),
    (("pinv differentiable rank-preserving neighborhood gradcheck linalg.pinv low rank "
      "pinv backward repeated singular values rank deficient pseudo-inverse gradient"),
     "questions/op-complex-and-norms"),
    (("ill-conditioned gradients QR torch.qr gradient not full rank QR decomposition "
      "backward rank deficient linalg.qr autodiff"),
     "questions/op-complex-and-norms"),
    (("svd-based pseudoinversion vs torch.linalg.pinv pinv rtol gradient different "
      "truncated pseudo inverse backward different gradient behaviors during "
      "backpropagation"),
     "questions/op-complex-and-norms"),
    (("Derivative for aten::linalg_pinv is not implemented linalg.pinv rcond tensor "
      "pinv Tensor rcond gradcheck pinv atol rtol tensor backward"),
     "questions/op-complex-and-norms"),
    (("the derivative for 'histc' is not implemented torch.histc backward histogram loss "
      "differentiable histogram function with derivatives soft binning gaussian kernels"),
     "questions/op-selection-and-signal"),
    (("percentile backward function torch.kthvalue gradient several percentiles at once "
      "backward lookup table torchpercentile"), "questions/op-selection-and-signal"),
    (("kthvalue backward selection reduce function autograd bugs mode median backward "
      "double backward kthvalue"), "questions/op-selection-and-signal"),
    (("composite compliance backward value selecting reduction ops topk kthvalue median "
      "backward vmap per-sample gradients sort topk"), "questions/op-selection-and-signal"),
    (("autograd STFT torch.stft backward differentiable stft istft stft as autograd op "
      "stft requires the return_complex parameter be given for real inputs"),
     "questions/op-selection-and-signal"),
    (("xlogy returns wrong gradient when input is 0 xlogy gradient at zero xlog1py gradient "
      "x=0 d/dx x log y"), "questions/op-selection-and-signal"),
    (("grad of sinc explodes at 0 torch.sinc gradient nan sinc derivative at zero "
      "derivatives.yaml sinc"), "questions/op-selection-and-signal"),
    (("preserve_rng_state checkpoint dropout gradient checkpointing dropout different "
      "mask bitwise accuracy checkpointed vs non-checkpointed dropout set "
      "preserve_rng_state True if there is dropout activation checkpointing recompute "
      "fresh dropout masks"),
     "questions/collectives-and-checkpoint-rng"),
    (("preserve_rng_state torch.compile selective checkpointing checkpoint dropout "
      "torch.compile gradient mismatch eager run_with_rng_state checkpointing recompute "
      "RNG ops backward compile"),
     "questions/collectives-and-checkpoint-rng"),
    (("dist.all_gather no gradient torch.distributed.nn.all_gather all_gather with "
      "gradients gather_with_grad contrastive loss torch.distributed has no attribute "
      "nn"),
     "questions/collectives-and-checkpoint-rng"),
    (("wrong gradient torch.distributed.nn.all_gather _Reduce_Scatter backward "
      "all_gather all_gather backward reduce_scatter all_gather gradient NCCL"),
     "questions/collectives-and-checkpoint-rng"),
    (("gradient for collective apis torch.distributed.nn.all_reduce gradient scaled "
      "autograd version of all_reduce dist.all_reduce vs "
      "torch.distributed.nn.all_reduce"),
     "questions/collectives-and-checkpoint-rng"),
    (("BatchNorm backpropagation model.train() model.eval() gradients different "
      "between train and eval mode gradient of the layer before BatchNorm is "
      "different same output same loss different gradients"),
     "questions/losses-norms-activations"),
    (("accuracy grad_fn None why does the nll has grad_fn while accuracy doesn't "
      "argmax no grad_fn accuracy not differentiable"),
     "questions/losses-norms-activations"),
    (("MultiMarginLoss has no attribute 'backward' loss module backward "
      "AttributeError nn.Module backward method 'MultiMarginLoss' object has no "
      "attribute 'backward'"),
     "questions/losses-norms-activations"),
    (("poisson_nll_loss log_input=False nan PoissonNLLLoss nan loss input zero log of "
      "zero poisson nll loss negative input silent NaN"),
     "questions/losses-norms-activations"),
    (("rrelu backward fail training=True upper=True Subtraction, the `-` operator, "
      "with a bool tensor is not supported RreluWithNoiseBackward0 rrelu upper bool"),
     "questions/losses-norms-activations"),
    (("checkpoint context_fn custom context manager for checkpoint context_fn returns "
      "two context managers Passing `context_fn` or `debug` is only supported when "
      "use_reentrant=False"),
     "questions/collectives-and-checkpoint-rng"),
    (("checkpoint debug=True with context_fn debug=True is incompatible with "
      "non-default context_fn debug mode selective activation checkpointing checkpoint "
      "debug trace of recomputed ops"),
     "questions/collectives-and-checkpoint-rng"),
    (("gradient from each use of a tensor separately x.grad sum of gradients from all "
      "branches concatenate gradients instead of accumulating only gradient from last "
      "edge d = c + x"),
     "questions/gradients-by-hand"),
    (("why sum derivatives over time steps rnn shared weights across time steps "
      "gradient backpropagation through time weight sharing recurrent weight gradient "
      "sum"),
     "questions/gradients-by-hand"),
    (("pytorch autograd not matching computed derivatives tanh derivative by hand "
      "dy2/dw_h different from W_h.grad chain rule shared weight two steps"),
     "questions/gradients-by-hand"),
    (("verify my implementation of backpropagation manual gradient w1 differs from "
      "pytorch backward relu derivative missing in backprop formula mse gradient two "
      "layer network by hand"),
     "questions/gradients-by-hand"),
    (("parameter combinations zero gradients relu network all gradients zero dead relu "
      "hidden unit gradient zero MSE gradient w1 w2 b1 b2"),
     "questions/gradients-by-hand"),
    (("gradient of loss with respect to weights target constant is the target dropped "
      "in the gradient absolute error gradient depends on target target value in "
      "gradient descent"),
     "questions/gradients-by-hand"),
    (("gradient with respect to data label gradient of loss wrt labels is None labels "
      "requires_grad cross entropy y.grad_fn None label"),
     "questions/gradients-by-hand"),
    (("different results when manually optimizing parameters autograd.grad p.data -= lr "
      "* g vs optimizer.step manual SGD vs torch.optim.SGD reproduce optimizer step by "
      "hand"),
     "questions/gradients-by-hand"),
    (("while_loop autograd torch.while_loop backward backward through while loop "
      "variable number of iterations higher order op while_loop gradient torch.compile"),
     "questions/control-flow-and-reductions"),
    (("torch.cond backward cond higher order op autograd gradient through data "
      "dependent branch torch.compile When merging two branches' output in torch.cond"),
     "questions/control-flow-and-reductions"),
    (("out_dtype autograd Autograd not implemented for out_dtype higher order operator "
      "inputs require grad error autograd_not_implemented delayed error"),
     "questions/control-flow-and-reductions"),
    (("segment_reduce backward segment reduce gradient SegmentReduceBackward0 "
      "derivative for aten::_segment_reduce_backward is not implemented"),
     "questions/control-flow-and-reductions"),
    (("segment_reduce empty segment nan segment_reduce mean zero length segment segment "
      "reduce initial value empty row mean nan gradient"),
     "questions/control-flow-and-reductions"),
    (("var_mean backward std_mean gradient VarMeanBackward0 compute var and mean at the "
      "same time autograd"),
     "questions/control-flow-and-reductions"),
    (("logsumexp infinities nan backward logsumexp inf gradient nan logaddexp inf "
      "gradient robust logsumexp infinite inputs"),
     "questions/control-flow-and-reductions"),
    (("logaddexp second derivative nan logaddexp double backward nan higher order "
      "gradient logaddexp2 nan torch.func grad of grad logaddexp nan"),
     "questions/control-flow-and-reductions"),
    (("only the diagonal of the jacobian derivative without calculating the full jacobian "
      "torch.diag(jacobian(f, x)) slow elementwise function derivative autograd"),
     "questions/vjp-jvp"),
    (("selective activation checkpointing policy checkpoint every other layer save matmul "
      "recompute the rest create_selective_checkpoint_contexts CheckpointPolicy"),
     "questions/collectives-and-checkpoint-rng"),
    (("gradient checking smaller epsilon worse finite difference epsilon choice can I blame "
      "float precision two-sided difference error gradcheck float32 Jacobian mismatch"),
     "questions/gradients-by-hand"),
    (("module hooks ignore kwargs register_forward_hook with_kwargs hook only collects "
      "positional arguments forward pre hook modify kwargs full backward hook keyword argument "
      "grad_input"),
     "questions/module-hooks"),
    (("zero gradient for unknown outputs loss function that ignores certain samples mask loss "
      "for missing labels train only one output backprop nan target masked loss"),
     "questions/losses-norms-activations"),
    (("update single output neural network change one output keep the others unchanged MSE "
      "loss only differing element gradient train only one output neuron"),
     "questions/gradients-by-hand"),
    (("one hot labels all zeros gradient cross entropy all zero target gradient descent labels "
      "all zeros softmax minus target gradient"),
     "questions/losses-norms-activations"),
    (("clamp tensor min max backward gradient of clamp with respect to min clamp gradient at "
      "boundary torch.clamp min greater than max gradient"),
     "questions/operator-edge-cases"),
    (("forward AD clamp tensor clamp jvp min max tensors jacfwd clamp forward mode clamp max "
      "less than min"),
     "questions/vjp-jvp"),
    (("where are gradients copied to param.grad torch.compile compiled backward graph outputs "
      "gradients runtime wrapper copies parameters CompiledFunctionBackward AccumulateGrad cuda "
      "graphs backward param.grad"),
     "questions/parameter-gradients"),
    (("weighted combination of models gradient gradient with respect to combination weight "
      "a1 * M1.parameters() combine parameters of two models learn mixing weights of two models"),
     "questions/parameter-gradients"),
    (("parametrization requires_grad propagation register_parametrization frozen weight "
      "right_inverse original requires_grad parametrizations.weight.original trainable "
      "concatenated parametrizations requires_grad"),
     "questions/parameter-gradients"),
    (("householder_product backward householder_product forward AD orgqr gradient "
      "householder_product double backward geqrf derivative"),
     "questions/linalg"),
    (("freeze part of embedding matrix update only new token embeddings train only out of "
      "vocab rows freeze some rows of embedding weight requires_grad on slice of weight"),
     "questions/hooks"),
    (("grad_fn SliceBackward0 ViewBackward0 inverse operation grad_fn for a non-differentiable "
      "function where is SliceBackward0 implemented"),
     "questions/reading-gradients"),
    (("AsStridedBackward0 CopySlices b[0] += a[0] autograd graph in-place slice grad_fn "
      "CopySlices meaning"),
     "questions/reading-gradients"),
    (("manually calculating integrated gradient integrated gradients baseline captum "
      "IntegratedGradients attribution integrate gradient alpha from 0 to 1"),
     "questions/reading-gradients"),
    (("copysign backward copysign gradient negative zero torch.copysign gradient other "
      "copysign -0.0 gradient sign"),
     "questions/op-complex-and-norms"),
    (("difference between sample() and rsample() sample vs rsample rsample gradient "
      "reparameterization trick pytorch backpropagate through sampling"),
     "questions/discrete-sampling"),
    (("backpropagation to update inputs not weights gradient on the input examples dJ/dx "
      "instead of dJ/dW fine-tuning word embeddings gradient"),
     "questions/reading-gradients"),
    (("hardswish backward x equal to 3 hardswish gradient mismatch hardswish_backward "
      "hardswish derivative at boundary"),
     "questions/losses-norms-activations"),
    (("L2 norm regularization negative weights gradient of L2 regularization dW += 2 * reg * W "
      "add regularization loss to the gradient weight decay gradient"),
     "questions/gradients-by-hand"),
    (("gradient of weight normalization w = g v / ||v|| gradient with respect to v weight norm "
      "reparameterization derivative grad_g L"),
     "questions/parameter-gradients"),
    (("gradient of a reduction operation sum along axis gradient replicated why not split the "
      "gradient gradient of sum over dimension"),
     "questions/control-flow-and-reductions"),
    (("rms_norm only forward where is rms backward autograd.Function without backward "
      "registered with dispatch key CUDA autograd still works an autograd kernel was not "
      "registered to the Autograd key(s)"),
     "questions/custom-ops"),
    (("forward and backward about TopLeftPool why custom pooling needs backward why roipooling "
      "need to backward custom autograd Function backward what does it update"),
     "questions/custom-ops"),
    (("what happens when loss are negative negative loss gradient descent loss below zero "
      "maximization loss multiplied by the gradient"),
     "questions/gradients-by-hand"),
    (("optimize masking parameter threshold grad is None learnable threshold mask gradient "
      "with respect to the mask soft mask sigmoid"),
     "questions/discrete-sampling"),
    (("gradient of classifier score with respect to z gradient ascent on noise vector "
      "controllable image synthesis GAN change latent vector to get feature"),
     "questions/gan-gradients"),
    (("how is the generator in a GAN corrected backpropagate discriminator error to generator "
      "error attributed to individual pixels error divided by number of pixels"),
     "questions/gan-gradients"),
    (("differentiability in generative adversarial networks why G differentiable wrt its "
      "inputs D differentiable wrt input differentiable wrt parameters gradient descent"),
     "questions/gan-gradients"),
]

# What each grad_fn node computes, from derivatives.yaml (reference/backward-formulas)
PAIRS += [
    ("what does MulBackward0 compute", "reference/backward-formulas"),
    ("derivatives.yaml backward formula of an operator", "reference/backward-formulas"),
    ("where is the backward of a torch function defined", "reference/backward-formulas"),
    ("SgnBackward0 formula", "reference/backward-formulas"),
    ("grad_fn node name list", "reference/backward-formulas"),
]

# Round 37's questions, answered after their blind grade
PAIRS += [
    ("channels_last pooling wrong gradient torch.compile", "questions/linalg-fft-pooling"),
    ("lerp weight requires_grad derivative not implemented", "questions/operator-gradients"),
    ("CrossScan CrossMerge backward autograd.Function", "questions/custom-functions"),
]

# Kinks, steps and domain edges of every elementwise operator (reference/kinks)
PAIRS += [
    ("gradient at a kink left or right derivative", "reference/kinks"),
    ("hardswish gradient at 3", ("reference/kinks", "questions/losses-norms-activations",
                                 "questions/operator-edge-cases")),
    ("torch.maximum gradient when both inputs are equal", ("reference/kinks",
                                                           "questions/operator-edge-cases",
                                                           "questions/operator-gradients")),
    ("hypot gradient nan at zero", "reference/kinks"),
    ("one-sided derivative at a non-differentiable point", "reference/kinks"),
    ("log of a negative number nan but the gradient is finite", "reference/kinks"),
    ("clamp gradient at the boundary min equals x", ("reference/kinks",
                                                     "questions/operator-edge-cases",
                                                     "questions/operator-gradients")),
    ("sqrt gradient at -0.0 negative zero", ("reference/kinks", "questions/operator-edge-cases")),
]

# Where a path was cut: the line and the no_grad that turned recording off
PAIRS += [
    ("which line turned off gradients no_grad somewhere in my model",
     ("questions/grad-mode", "guide/missing-gradients")),
    ("find the torch.no_grad decorator that cut my model parameters get no gradient",
     ("questions/grad-mode", "guide/missing-gradients")),
]

# Round 38's entries, in a reader's loose words
PAIRS += [
    ("torchscript autograd.grad Expected a value of type List[Tensor] for argument outputs",
     "questions/torchscript"),
    ("requires_grad_ inside a torch.jit.script function", "questions/torchscript"),
    ("custom autograd Function called from jit script code", "questions/torchscript"),
    ("jit.trace a function that calls autograd.grad", "questions/torchscript"),
    ("__torch_function__ not called inside a backward hook tensor subclass", "questions/hooks"),
    ("checkpoint loses my tensor subclass in the recomputation", "questions/checkpointing"),
    ("quantization aware training uses too much memory fake quantize",
     "questions/discrete-sampling"),
    ("pack_padded_sequence backward slow", "questions/nested-tensors"),
    ("nan in padded positions of transformer input src_key_padding_mask", "questions/nan-inf"),
]

# Pages being written; each pair is checked once its page is in the build.
PENDING: list[tuple[str, str | tuple[str, ...]]] = [
]
