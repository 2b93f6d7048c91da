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
    ("RuntimeError: grad can be implicitly created only for scalar outputs", "guide/errors"),
    ("grad can be implicitly created only for scalar outputs", "guide/errors"),
    ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
     "guide/errors"),
    (("RuntimeError: Trying to backward through the graph a second time (or directly access "
      "saved tensors after they have already been freed)"), "guide/errors"),
    (("Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has a "
      "shape of torch.Size([2])"), "guide/errors"),
    ("UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
     ("guide/errors", "guide/missing-gradients")),
    (("one of the variables needed for gradient computation has been modified by an inplace "
      "operation"), "guide/missing-gradients"),
    ("Only Tensors of floating point and complex dtype can require gradients",
     "guide/missing-gradients"),
    ("TypeError: unsupported operand type(s) for *: 'NoneType' and 'float' weight.grad",
     "guide/missing-gradients"),
    ("loss tensor(0.53, grad_fn=<MseLossBackward0>) but mselossbackward0 NoneType",
     "guide/missing-gradients"),
    ("grad can be implicitly created only for real scalar outputs complex",
     ("guide/errors", "guide/complex")),
    ("Function MulBackward0 returned nan values in its 0th output", "guide/nan-gradients"),
    ("GradcheckError: Jacobian mismatch for output 0 with respect to input 0",
     ("guide/checking-a-backward", "questions/sparse-gradcheck", "questions/custom-functions")),
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
     ("guide/five-ways", "questions/backward-gradient")),
    ("torch.func.vjp", ("guide/five-ways", "guide/whole-jacobians", "questions/jacobians")),
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
    ("register_hook gradient of an intermediate tensor", ("guide/hooks", "guide/accumulation")),
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
    ("per-sample gradients vmap grad", "guide/torch-func"),
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
]

# Pages being written; each pair is checked once its page is in the build.
PENDING: list[tuple[str, str | tuple[str, ...]]] = [
]
