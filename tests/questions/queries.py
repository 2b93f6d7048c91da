"""The fixed search queries the question corpus was collected with.

Written on 2026-11-29 before any result was read, and run once each through the ``search``
tool: ``pages`` (PyTorch forum and Stack Overflow threads) and ``issues`` (GitHub issues).
Every in-scope question a query returned is in ``corpus.json`` (near-duplicates merged), with
the query that found it first.  Topics are the corpus's topic names.
"""

from __future__ import annotations

QUERIES: dict[str, list[tuple[str, str]]] = {
    "backward-gradient": [
        ("pages", "pytorch backward gradient argument what does it mean"),
        ("pages", "grad can be implicitly created only for scalar outputs"),
        ("pages", "backward on non-scalar tensor pass torch.ones_like"),
        ("pages", "torch.autograd.grad grad_outputs meaning"),
        ("pages", "vector jacobian product pytorch backward explained"),
        ("pages", "loss.backward vs torch.autograd.grad difference"),
        ("pages", "backward multiple losses sum or separate"),
        ("pages", "Mismatch in shape grad_output has a shape"),
        ("issues", "backward gradient argument documentation vector-Jacobian product"),
    ],
    "missing-gradients": [
        ("pages", "pytorch .grad is None after backward"),
        ("pages", "gradient is None for non-leaf tensor"),
        ("pages", "element 0 of tensors does not require grad and does not have a grad_fn"),
        ("pages", "weights not updating optimizer.step pytorch"),
        ("pages", "requires_grad True but grad None after to(device)"),
        ("pages", "gradients are zero pytorch model not learning"),
        ("pages", "detach vs .data gradient pytorch"),
        ("pages", "One of the differentiated Tensors appears to not have been used in the graph"),
        ("issues", "grad is None unexpectedly leaf tensor"),
    ],
    "nan-inf": [
        ("pages", "pytorch gradient nan loss is finite"),
        ("pages", "torch.where nan gradient"),
        ("pages", "sqrt gradient nan at zero pytorch"),
        ("pages", "norm gradient nan zero vector"),
        ("pages", "detect_anomaly returned nan values in its 0th output"),
        ("pages", "exploding gradients inf pytorch clip_grad_norm"),
        ("issues", "nan gradient torch.where masked"),
    ],
    "graph-errors": [
        ("pages", "one of the variables needed for gradient computation has been modified by an inplace operation"),
        ("pages", "Trying to backward through the graph a second time"),
        ("pages", "a leaf Variable that requires grad is being used in an in-place operation"),
        ("pages", "retain_graph=True when needed pytorch"),
        ("pages", "in-place operation autograd safe pytorch"),
        ("pages", "can't call numpy on Tensor that requires grad"),
        ("pages", "view modified inplace autograd error"),
        ("issues", "inplace operation error version counter backward"),
    ],
    "accumulation-memory": [
        ("pages", "why does pytorch accumulate gradients zero_grad"),
        ("pages", "gradient accumulation multiple batches loss divided"),
        ("pages", "memory leak loss.item retain graph training loop"),
        ("pages", "torch.no_grad vs requires_grad False memory"),
        ("pages", "zero_grad set_to_none difference"),
        ("pages", "backward out of memory activations freed"),
        ("issues", "memory leak backward create_graph reference cycle"),
    ],
    "higher-order": [
        ("pages", "second derivative pytorch autograd create_graph"),
        ("pages", "hessian vector product pytorch"),
        ("pages", "gradient penalty wgan-gp autograd.grad create_graph"),
        ("pages", "double backward not supported derivative"),
        ("pages", "laplacian pinn second derivative autograd"),
        ("pages", "grad of grad returns None pytorch"),
        ("issues", "double backward create_graph incorrect second derivative"),
    ],
    "jacobians": [
        ("pages", "compute full jacobian pytorch efficiently"),
        ("pages", "torch.autograd.functional.jacobian slow vectorize"),
        ("pages", "jacobian of neural network output with respect to input batch"),
        ("pages", "torch.func jacrev jacfwd vmap"),
        ("pages", "per-sample gradients pytorch"),
        ("pages", "torch.autograd.functional.hessian model parameters"),
        ("pages", "forward mode automatic differentiation pytorch jvp"),
        ("issues", "jacrev vmap error batched gradient"),
        ("issues", "torch.func.functional_call grad parameters"),
    ],
    "custom-functions": [
        ("pages", "custom autograd function backward pytorch"),
        ("pages", "save_for_backward ctx pytorch"),
        ("pages", "custom backward returns wrong number of gradients"),
        ("pages", "straight through estimator pytorch backward"),
        ("pages", "function backward non-differentiable operation round argmax"),
        ("pages", "gradcheck fails custom function double precision"),
        ("issues", "autograd.Function setup_context vmap"),
        ("issues", "gradcheck Jacobian mismatch"),
    ],
    "hooks": [
        ("pages", "register_hook tensor gradient pytorch"),
        ("pages", "register_full_backward_hook grad_input grad_output"),
        ("pages", "modify gradients during backward hook"),
        ("pages", "get gradient of intermediate layer activation"),
        ("pages", "freeze part of weights embedding gradient mask"),
        ("issues", "backward hook not called module"),
    ],
    "distributed-amp-compile": [
        ("pages", "DistributedDataParallel gradients averaged backward"),
        ("pages", "Expected to have finished reduction in the prior iteration"),
        ("pages", "GradScaler unscale_ gradient clipping amp"),
        ("pages", "mixed precision gradients nan inf float16"),
        ("pages", "torch.compile backward gradient"),
        ("pages", "gradient checkpointing backward requires_grad"),
        ("pages", "FSDP gradients grad None sharded"),
        ("issues", "torch.compile autograd backward wrong gradient"),
        ("issues", "DDP no_sync gradient accumulation"),
    ],
    "operator-gradients": [
        ("pages", "gradient of argmax not differentiable pytorch"),
        ("pages", "gradient of max min pytorch ties"),
        ("pages", "gradient of indexing scatter gather pytorch"),
        ("pages", "abs gradient at zero relu derivative at 0 pytorch"),
        ("pages", "gradient through torch.round or clamp zero"),
        ("pages", "complex gradient pytorch conjugate"),
        ("pages", "gradient of eigenvalues svd backward nan"),
        ("issues", "wrong gradient formula backward op"),
    ],
    "sparse-gradcheck": [
        ("pages", "sparse jacobian pytorch"),
        ("pages", "sparse tensor gradient backward"),
        ("pages", "torch.autograd.gradcheck how to use"),
        ("pages", "embedding sparse gradients optimizer"),
        ("issues", "gradcheck sparse"),
        ("issues", "jacobian sparsity pattern coloring"),
    ],
}

TOPICS = tuple(QUERIES)
